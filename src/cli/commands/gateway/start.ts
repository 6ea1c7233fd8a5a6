/** `svc gateway start`: runs the gateway until interrupted. */
import type { Command } from 'commander';
import type { GatewayNode } from '../../../node/index.js';
import { CliContext } from '../../context.js';
import { usageError } from '../../errors.js';
import type { CliIo } from '../../io.js';
import { parsePort } from '../../options.js';
import { printJson } from '../../output.js';
import { waitForShutdown } from '../../shutdown.js';
import { packageVersion } from '../../version.js';
import type { GatewayGroupOptions } from './shared.js';

interface StartOptions {
  host?: string;
  port?: string;
  buyerUrl?: string;
  buyerPort?: string;
  localProxy?: boolean;
  x402Facilitator?: string;
  topupMinUsd?: string;
  topupMaxUsd?: string;
  tunnel?: string;
  trustedProxy?: string[];
}

export function registerStartCommand(gateway: Command, io: CliIo): void {
  gateway
    .command('start')
    .description(
      'start the gateway (keys, budgets, policies, logs) with its own buyer in the same process',
    )
    .option('--host <host>', 'interface to listen on (default 127.0.0.1)')
    .option('--port <port>', 'port (default 8379; 0 picks a free one)')
    .option(
      '--buyer-url <url>',
      'forward to a buyer already running elsewhere (several gateways sharing one buyer) instead of running one',
    )
    .option(
      '--buyer-port <port>',
      "port of this process's buyer, the local proxy on 127.0.0.1 (default buyer.port, 8377)",
    )
    .option(
      '--no-local-proxy',
      "do not offer the local proxy: this process's buyer listens on a random loopback port, for its own audits only",
    )
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
      '\nExamples:\n  svc gateway start\n  svc gateway start --buyer-url http://127.0.0.1:8377   # a buyer started with svc buyer start\n  svc gateway start --host 0.0.0.0 --database-url postgres://gw@db/gateway\n  FACILITATOR_API_KEY_ID=... FACILITATOR_API_KEY_SECRET=... svc gateway start --x402-facilitator cdp',
    )
    .action(async (options: StartOptions, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { databaseUrl } = command.optsWithGlobals<GatewayGroupOptions>();
      const flags: Record<string, unknown> = {};
      if (options.host) flags['gateway.host'] = options.host;
      if (options.port !== undefined) flags['gateway.port'] = parsePort(options.port);
      if (options.buyerUrl) flags['gateway.buyerUrl'] = options.buyerUrl;
      if (options.buyerUrl && (options.buyerPort !== undefined || options.localProxy === false)) {
        throw usageError(
          '--buyer-port and --no-local-proxy set up the buyer this process runs; with --buyer-url it runs none',
        );
      }
      if (options.buyerPort !== undefined) {
        flags['buyer.port'] = parsePort(options.buyerPort, '--buyer-port');
      }
      if (databaseUrl) flags['gateway.databaseUrl'] = databaseUrl;
      if (options.x402Facilitator) flags['gateway.x402Facilitator'] = options.x402Facilitator;
      if (options.topupMinUsd) flags['gateway.topupMinUsd'] = options.topupMinUsd;
      if (options.topupMaxUsd) flags['gateway.topupMaxUsd'] = options.topupMaxUsd;
      if (options.trustedProxy) flags['gateway.trustedProxies'] = options.trustedProxy;
      const { config } = ctx.loadConfig(flags);
      const [{ startGatewayNode }, { topupsFromConfig }] = await Promise.all([
        import('../../../node/index.js'),
        import('../../../x402/index.js'),
      ]);
      const node = await startGatewayNode({
        config,
        dataDir: ctx.dataDir,
        logger: ctx.logger,
        env: io.env,
        version: packageVersion(),
        ...(options.localProxy === false ? { buyerPort: 0 } : {}),
        topups: topupsFromConfig({ config, dataDir: ctx.dataDir, env: io.env, logger: ctx.logger }),
        ...(options.tunnel ? { tunnel: options.tunnel } : {}),
      });
      const { gateway } = node;
      const localProxy = options.localProxy !== false;
      if (ctx.json) {
        printJson(io, {
          url: gateway.url,
          buyer: node.buyer
            ? {
                inProcess: true,
                url: node.buyer.url,
                localProxy,
                peerId: node.buyer.node.peerId,
                payments: node.buyer.payments
                  ? { enabled: true }
                  : { enabled: false, reason: node.paymentsProblem ?? null },
              }
            : { inProcess: false, url: config.gateway.buyerUrl },
        });
      } else {
        io.stdout(
          `gateway listening on ${gateway.url} (OpenAI base ${gateway.url}/v1, Anthropic base ${gateway.url})\n`,
        );
        io.stdout(buyerLines(node, localProxy, config.gateway.buyerUrl));
      }
      const { tunnel } = node;
      if (tunnel && !ctx.json)
        io.stdout(
          `tunnel public URL ${tunnel.baseUrl} (OpenAI base ${tunnel.baseUrl}/v1, Anthropic base ${tunnel.baseUrl})\n`,
        );
      await waitForShutdown();
      await node.stop();
    });
}

/** What `svc gateway start` says about its buyer. */
function buyerLines(node: GatewayNode, localProxy: boolean, buyerUrl: string | undefined): string {
  if (!node.buyer) return `forwarding to the buyer at ${buyerUrl}\n`;
  const proxy = localProxy ? `local proxy on ${node.buyer.url}` : 'local proxy off';
  const payments = node.buyer.payments
    ? 'payments  on; wallet USDC is deposited automatically'
    : `payments  off (${node.paymentsProblem ?? 'no chain'}): free sellers only`;
  return `buyer in this process (peer ${node.buyer.node.peerId}); ${proxy}\n  ${payments}\n`;
}
