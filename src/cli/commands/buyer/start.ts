/** `svc buyer start`: the local buyer proxy on 127.0.0.1 (spec 4.2, 4.4). */
import type { Command } from 'commander';
import { CachedReputation, runBuyerNode } from '../../../buyer/index.js';
import { connectChain } from '../../../chain/index.js';
import type { SvcConfig } from '../../../config/index.js';
import { SvcError } from '../../../errors/index.js';
import {
  type BuyerPayments as ChannelPayments,
  createBuyerPayments,
  ReputationReader,
  readStoredChannels,
  toMeteringEntry,
} from '../../../payments/index.js';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';
import { printJson } from '../../output.js';
import { packageVersion } from '../../version.js';

/**
 * Payments and on-chain reputation when a chain is configured and reachable; otherwise the buyer
 * serves free offers only (paid ones answer 402 insufficient_deposits) and says so.
 */
async function openPayments(
  ctx: CliContext,
  config: SvcConfig,
): Promise<{ payments: ChannelPayments; reputation: CachedReputation } | undefined> {
  try {
    const chain = connectChain(config.chain, ctx.dataDir);
    const payments = createBuyerPayments({
      dataDir: ctx.dataDir,
      identities: ctx.identities(),
      chain: chain.contract,
      logger: ctx.logger,
      config: config.chain.payments,
    });
    await payments.start();
    const reputation = new CachedReputation(new ReputationReader({ contract: chain.contract }), {
      onError: (error) =>
        ctx.logger.warn({ err: String(error) }, 'reading seller reputation failed'),
    });
    return { payments, reputation };
  } catch (error) {
    ctx.logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'payments unavailable: serving free offers only',
    );
    return undefined;
  }
}

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
        const port = Number(options.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) {
          throw new SvcError('invalid_argument', {
            message: `--port must be a number from 0 to 65535, got "${options.port}".`,
          });
        }
        flags['buyer.port'] = port;
      }
      const { config } = ctx.loadConfig(flags);
      const identity = ctx.identities().loadDefault();
      const chain = await openPayments(ctx, config);
      let running: Awaited<ReturnType<typeof runBuyerNode>>;
      try {
        running = await runBuyerNode({
          config,
          dataDir: ctx.dataDir,
          identity,
          logger: ctx.logger,
          version: packageVersion(),
          ...(chain ? { payments: chain.payments, reputation: chain.reputation } : {}),
          // Amounts in micro-USD as decimal strings (bigints are rendered as strings).
          channels: () => {
            try {
              return readStoredChannels(ctx.dataDir).map(toMeteringEntry);
            } catch {
              return [];
            }
          },
        });
      } catch (error) {
        await chain?.payments.stop();
        throw error;
      }
      const info = {
        url: running.url,
        peerId: running.node.peerId,
        dataDir: ctx.dataDir,
        listen: running.node.multiaddrs(),
      };
      if (ctx.json) printJson(io, info);
      else {
        io.stdout(
          `buyer listening on ${running.url}\n  peer id   ${info.peerId}\n  data dir  ${info.dataDir}\n` +
            `  OpenAI clients:    base URL ${running.url}/v1\n  Anthropic clients: base URL ${running.url}\n`,
        );
      }
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await running.stop();
      await chain?.payments.stop();
      if (!ctx.json) io.stdout('buyer stopped\n');
    });
}
