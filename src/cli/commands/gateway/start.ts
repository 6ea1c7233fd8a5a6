/** `svc gateway start`: runs the gateway until interrupted. */
import type { Command } from 'commander';
import { startGateway } from '../../../gateway/index.js';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';
import type { GatewayGroupOptions } from './shared.js';

interface StartOptions {
  host?: string;
  port?: string;
  buyerUrl?: string;
}

export function registerStartCommand(gateway: Command, io: CliIo): void {
  gateway
    .command('start')
    .description('start the gateway (keys, budgets, policies, logs) in front of the buyer')
    .option('--host <host>', 'interface to listen on (default 127.0.0.1)')
    .option('--port <port>', 'port (default 8379; 0 picks a free one)')
    .option('--buyer-url <url>', 'where the buyer listens (default http://127.0.0.1:8377)')
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway start\n  svc gateway start --host 0.0.0.0 --database-url postgres://gw@db/gateway',
    )
    .action(async (options: StartOptions, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { databaseUrl } = command.optsWithGlobals<GatewayGroupOptions>();
      const flags: Record<string, unknown> = {};
      if (options.host) flags['gateway.host'] = options.host;
      if (options.port !== undefined) flags['gateway.port'] = Number(options.port);
      if (options.buyerUrl) flags['gateway.buyerUrl'] = options.buyerUrl;
      if (databaseUrl) flags['gateway.databaseUrl'] = databaseUrl;
      const { config } = ctx.loadConfig(flags);
      const gateway = await startGateway({
        config: config.gateway,
        dataDir: ctx.dataDir,
        logger: ctx.logger,
        env: io.env,
      });
      io.stdout(
        `gateway listening on ${gateway.url} (OpenAI base ${gateway.url}/v1, Anthropic base ${gateway.url})\n`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await gateway.stop();
    });
}
