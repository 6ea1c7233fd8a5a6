/** `svc buyer start`: the local buyer proxy on 127.0.0.1. */
import type { Command } from 'commander';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';
import { parsePort } from '../../options.js';
import { printJson } from '../../output.js';
import { waitForShutdown } from '../../shutdown.js';
import { packageVersion } from '../../version.js';

export function registerStartCommand(buyer: Command, io: CliIo): void {
  buyer
    .command('start')
    .description(
      'start the local buyer proxy on 127.0.0.1 (no config file needed; stops on Ctrl-C)',
    )
    .option('--port <port>', 'HTTP port (default buyer.port, 8377; 0 picks a free one)')
    .addHelpText(
      'after',
      '\nExamples:\n  svc buyer start\n  svc buyer start --port 9000\n\nThen point clients at it:\n  OPENAI_BASE_URL=http://127.0.0.1:8377/v1 OPENAI_API_KEY=any\n  ANTHROPIC_BASE_URL=http://127.0.0.1:8377 ANTHROPIC_API_KEY=any',
    )
    .action(async (options: { port?: string }, command: Command) => {
      const ctx = CliContext.of(command, io);
      const flags: Record<string, unknown> = {};
      if (options.port !== undefined) {
        flags['buyer.port'] = parsePort(options.port);
      }
      const { config } = ctx.loadConfig(flags);
      const identities = await ctx.identities();
      const identity = identities.loadDefault();
      const { configuredChain, startPaidBuyerNode } = await import('../../../node/index.js');
      const chain = configuredChain(config.chain, ctx.dataDir);
      const running = await startPaidBuyerNode({
        config,
        dataDir: ctx.dataDir,
        identity,
        identities,
        chain: chain.contract,
        paymentsConfig: config.chain.payments,
        logger: ctx.logger,
        version: packageVersion(),
      });
      const problem = chain.problem ?? running.paymentsProblem;
      const info = {
        url: running.url,
        peerId: running.node.peerId,
        dataDir: ctx.dataDir,
        listen: running.node.multiaddrs(),
        payments: running.payments
          ? { enabled: true, chainId: chain.contract?.chainId ?? null }
          : { enabled: false, reason: problem ?? null },
      };
      if (ctx.json) printJson(io, info);
      else {
        io.stdout(
          `buyer listening on ${running.url}\n  peer id   ${info.peerId}\n  data dir  ${info.dataDir}\n` +
            `  OpenAI clients:    base URL ${running.url}/v1\n  Anthropic clients: base URL ${running.url}\n` +
            (running.payments
              ? `  payments  on (chain ${chain.contract?.chainId}); wallet USDC is deposited automatically\n`
              : `  payments  off (${problem ?? 'no chain'}): free sellers only; run \`svc chain start\` for a local chain\n`),
        );
      }
      await waitForShutdown();
      await running.stop();
      if (!ctx.json) io.stdout('buyer stopped\n');
    });
}
