/** `svc gateway start`: runs the gateway until interrupted. */
import { join } from 'node:path';
import type { Command } from 'commander';
import { startGateway } from '../../../gateway/index.js';
import {
  loadOrCreateKey,
  type RunningGatewayTunnel,
  startGatewayTunnel,
} from '../../../tunnel/index.js';
import { topupsFromConfig } from '../../../x402/index.js';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';
import { parsePort } from '../../options.js';
import { waitForShutdown } from '../../shutdown.js';
import type { GatewayGroupOptions } from './shared.js';

interface StartOptions {
  host?: string;
  port?: string;
  buyerUrl?: string;
  x402Facilitator?: string;
  topupMinUsd?: string;
  topupMaxUsd?: string;
  tunnel?: string;
  trustedProxy?: string[];
}

export function registerStartCommand(gateway: Command, io: CliIo): void {
  gateway
    .command('start')
    .description('start the gateway (keys, budgets, policies, logs) in front of the buyer')
    .option('--host <host>', 'interface to listen on (default 127.0.0.1)')
    .option('--port <port>', 'port (default 8379; 0 picks a free one)')
    .option('--buyer-url <url>', 'where the buyer listens (default http://127.0.0.1:8377)')
    .option(
      '--x402-facilitator <value>',
      'x402 facilitator for key top-ups: cdp, x402.org, local or a base URL (default: local on the local chain)',
    )
    .option('--topup-min-usd <usd>', 'smallest top-up (default 2)')
    .option('--topup-max-usd <usd>', 'largest top-up (default 500)')
    .option(
      '--tunnel <multiaddr>',
      'also serve through a tunnel relay (svc tunnel relay): its multiaddr ending in /p2p/<id>',
    )
    .option(
      '--trusted-proxy <ip-or-cidr>',
      'believe X-Forwarded-* from this reverse proxy (repeatable; gateway.trustedProxies)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway start\n  svc gateway start --host 0.0.0.0 --database-url postgres://gw@db/gateway\n  FACILITATOR_API_KEY_ID=... FACILITATOR_API_KEY_SECRET=... svc gateway start --x402-facilitator cdp',
    )
    .action(async (options: StartOptions, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { databaseUrl } = command.optsWithGlobals<GatewayGroupOptions>();
      const flags: Record<string, unknown> = {};
      if (options.host) flags['gateway.host'] = options.host;
      if (options.port !== undefined) flags['gateway.port'] = parsePort(options.port);
      if (options.buyerUrl) flags['gateway.buyerUrl'] = options.buyerUrl;
      if (databaseUrl) flags['gateway.databaseUrl'] = databaseUrl;
      if (options.x402Facilitator) flags['gateway.x402Facilitator'] = options.x402Facilitator;
      if (options.topupMinUsd) flags['gateway.topupMinUsd'] = options.topupMinUsd;
      if (options.topupMaxUsd) flags['gateway.topupMaxUsd'] = options.topupMaxUsd;
      if (options.trustedProxy) flags['gateway.trustedProxies'] = options.trustedProxy;
      const { config } = ctx.loadConfig(flags);
      const gateway = await startGateway({
        config: config.gateway,
        dataDir: ctx.dataDir,
        logger: ctx.logger,
        env: io.env,
        topups: topupsFromConfig({ config, dataDir: ctx.dataDir, env: io.env, logger: ctx.logger }),
      });
      io.stdout(
        `gateway listening on ${gateway.url} (OpenAI base ${gateway.url}/v1, Anthropic base ${gateway.url})\n`,
      );
      let tunnel: RunningGatewayTunnel | undefined;
      if (options.tunnel) {
        try {
          tunnel = await startGatewayTunnel({
            relay: options.tunnel,
            gatewayUrl: gateway.url,
            tunnelToken: gateway.tunnelToken,
            network: config.network,
            privateKey: loadOrCreateKey(join(ctx.dataDir, 'gateway', 'tunnel.key')),
            bodyLimitBytes: config.gateway.bodyLimitBytes,
            logger: ctx.logger,
          });
        } catch (error) {
          await gateway.stop();
          throw error;
        }
        io.stdout(
          `tunnel public URL ${tunnel.baseUrl} (OpenAI base ${tunnel.baseUrl}/v1, Anthropic base ${tunnel.baseUrl})\n`,
        );
      }
      await waitForShutdown();
      await tunnel?.stop();
      await gateway.stop();
    });
}
