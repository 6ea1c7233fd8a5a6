/** `svc indexer start`: the public snapshot of the network, `GET /stats` (docs/guide/indexer.md). */
import type { Command } from 'commander';
import { SvcError } from '../../errors/index.js';
import { CliContext } from '../context.js';
import { INDEXER_PORT } from '../defaults.js';
import type { CliIo } from '../io.js';
import { printJson } from '../output.js';
import { waitForShutdown } from '../shutdown.js';
import { packageVersion } from '../version.js';

interface StartFlags {
  port: string;
  host: string;
  databaseUrl?: string;
  refreshSeconds: string;
  rateLimit: string;
  confirmations: string;
}

function wholeNumber(text: string, flag: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new SvcError('invalid_argument', {
      message: `${flag} must be a whole number from ${min} to ${max}, got "${text}".`,
    });
  }
  return value;
}

export function registerIndexerCommands(program: Command, io: CliIo): void {
  const indexer = program
    .command('indexer')
    .description(
      'the public snapshot of the network: sellers and their on-chain record at GET /stats',
    );

  indexer
    .command('start')
    .description(
      'crawl sellers and the payments contract and serve GET /stats, /healthz and /metrics (stops on Ctrl-C)',
    )
    .option('--port <port>', 'HTTP port (0 picks a free one)', String(INDEXER_PORT))
    .option('--host <host>', 'interface to listen on (0.0.0.0 to serve the public)', '127.0.0.1')
    .option(
      '--database-url <url>',
      'PostgreSQL shared by several indexers (one crawls, all serve); default SQLite in <data-dir>/indexer/',
    )
    .option('--refresh-seconds <n>', 'rebuild the snapshot every n seconds', '120')
    .option('--rate-limit <n>', 'requests per second per client address (0 = unlimited)', '20')
    .option(
      '--confirmations <n>',
      'blocks a payment event must be buried under before it counts',
      '2',
    )
    .addHelpText(
      'after',
      `\nThe chain is the configured one (chain.network, chain.rpcUrl; local: the anvil of \`svc chain start\`).\nExamples:\n  svc indexer start\n  svc indexer start --host 0.0.0.0 --port ${INDEXER_PORT} --refresh-seconds 60\n  svc indexer start --database-url postgres://idx@db/indexer\n  curl -s http://127.0.0.1:${INDEXER_PORT}/stats`,
    )
    .action(async (flags: StartFlags, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { config } = ctx.loadConfig();
      const port = wholeNumber(flags.port, '--port', 0, 65535);
      const refreshSeconds = wholeNumber(flags.refreshSeconds, '--refresh-seconds', 1, 86_400);
      const rateLimitPerSecond = wholeNumber(flags.rateLimit, '--rate-limit', 0, 1_000_000);
      const confirmations = wholeNumber(flags.confirmations, '--confirmations', 0, 1000);
      const [{ connectChain }, { startIndexerNode }] = await Promise.all([
        import('../../chain/index.js'),
        import('../../node/index.js'),
      ]);
      const chain = connectChain(config.chain, ctx.dataDir);
      const running = await startIndexerNode({
        network: config.network,
        contract: chain.contract,
        dataDir: ctx.dataDir,
        ...(flags.databaseUrl !== undefined ? { databaseUrl: flags.databaseUrl } : {}),
        host: flags.host,
        port,
        refreshSeconds,
        rateLimitPerSecond,
        confirmations,
        version: packageVersion(),
        logger: ctx.logger,
      });
      const info = {
        url: running.url,
        stats: `${running.url}/stats`,
        chainId: chain.contract.chainId,
        paymentsContract: chain.contract.paymentsAddress,
        store: flags.databaseUrl !== undefined ? 'postgres' : 'sqlite',
        refreshSeconds,
      };
      if (ctx.json) printJson(io, info);
      else
        io.stdout(
          `indexer listening on ${running.url}\n  snapshot  ${info.stats} (rebuilt every ${refreshSeconds} s)\n` +
            `  chain     ${info.chainId}, payments contract ${info.paymentsContract}\n  store     ${info.store}\n`,
        );
      await waitForShutdown();
      await running.stop();
      if (!ctx.json) io.stdout('indexer stopped\n');
    });
}
