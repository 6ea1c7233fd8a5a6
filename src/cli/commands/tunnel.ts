/** `svc tunnel relay`: a public HTTPS endpoint for gateways behind NAT (docs/guide/gateway.md "Public URL for a gateway (tunnel)"). */
import { join } from 'node:path';
import type { Command } from 'commander';
import { CliContext } from '../context.js';
import { TUNNEL_BODY_LIMIT_BYTES, TUNNEL_STREAMS_PER_GATEWAY } from '../defaults.js';
import { CliError } from '../errors.js';
import type { CliIo } from '../io.js';
import { waitForShutdown } from '../shutdown.js';

interface RelayFlags {
  publicUrl: string;
  host: string;
  port: number;
  listen: string[];
  allow: string[];
  trustedProxy: string[];
  maxBodyBytes: number;
  maxStreams: number;
}

function positiveInt(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new CliError(`expected a whole number >= 0, got "${text}"`, 2);
  return value;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** Registers `svc tunnel`. */
export function registerTunnelCommands(program: Command, io: CliIo): void {
  const tunnel = program
    .command('tunnel')
    .description('a public URL for gateways that cannot be reached (behind NAT, on a laptop)');
  tunnel
    .command('relay')
    .description('serve <public-url>/<gateway-id>/v1/... for gateways started with --tunnel')
    .requiredOption(
      '--public-url <url>',
      'the URL clients use (TLS terminated in front of the relay)',
    )
    .option('--host <host>', 'HTTP interface', '127.0.0.1')
    .option('--port <port>', 'HTTP port (0 picks a free one)', positiveInt, 8380)
    .option(
      '--listen <multiaddr>',
      'where gateways dial in (repeatable; default /ip4/0.0.0.0/tcp/4010)',
      collect,
      [],
    )
    .option('--allow <peer-id>', 'only serve this gateway (repeatable; default any)', collect, [])
    .option(
      '--trusted-proxy <ip-or-cidr>',
      'believe X-Forwarded-For from this proxy (repeatable)',
      collect,
      [],
    )
    .option('--max-body-bytes <n>', 'largest request body', positiveInt, TUNNEL_BODY_LIMIT_BYTES)
    .option(
      '--max-streams <n>',
      'requests open at once per gateway',
      positiveInt,
      TUNNEL_STREAMS_PER_GATEWAY,
    )
    .addHelpText(
      'after',
      '\nExample:\n  svc tunnel relay --public-url https://tunnel.example.com --port 8380 --listen /ip4/0.0.0.0/tcp/4010',
    )
    .action(async (flags: RelayFlags, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { config } = ctx.loadConfig({});
      const [{ parsePeerId }, { startTunnelRelayNode }, { loadOrCreateKey }] = await Promise.all([
        import('../../identity/index.js'),
        import('../../node/index.js'),
        import('../../tunnel/index.js'),
      ]);
      let allow: string[];
      try {
        allow = flags.allow.map(parsePeerId);
      } catch (error) {
        throw new CliError(error instanceof Error ? error.message : String(error), 2);
      }
      const relay = await startTunnelRelayNode({
        publicUrl: flags.publicUrl,
        host: flags.host,
        port: flags.port,
        network: {
          ...config.network,
          listen: flags.listen.length > 0 ? flags.listen : ['/ip4/0.0.0.0/tcp/4010'],
        },
        privateKey: loadOrCreateKey(join(ctx.dataDir, 'tunnel', 'relay.key')),
        allowGateways: allow,
        trustedProxies: flags.trustedProxy,
        bodyLimitBytes: flags.maxBodyBytes,
        maxStreamsPerGateway: flags.maxStreams,
        logger: ctx.logger,
      });
      io.stdout(`tunnel relay listening on ${relay.url} (public ${relay.publicUrl})\n`);
      for (const address of relay.multiaddrs()) {
        io.stdout(`gateways connect with: svc gateway start --tunnel ${address}\n`);
      }
      await waitForShutdown();
      await relay.stop();
    });
}
