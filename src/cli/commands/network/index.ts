/** `svc network browse|peer|bootstrap`: look at the network and run a bootstrap node. */
import { type Command, Option } from 'commander';
import type { BrowseSort } from '../../../network/index.js';
import { CliContext } from '../../context.js';
import { BROWSE_ORDERS } from '../../defaults.js';
import { CliError } from '../../errors.js';
import type { CliIo } from '../../io.js';
import { parseIntOption } from '../../options.js';
import { printJson } from '../../output.js';
import { waitForShutdown } from '../../shutdown.js';
import { registerNetworkStatus } from './status.js';

function positiveInt(text: string): number {
  return parseIntOption(text, 'value', 1);
}

interface BrowseFlags {
  services?: boolean;
  service?: string;
  sort: BrowseSort;
  tag: string[];
  top: number;
  direct?: boolean;
  indexer?: string;
  wait: number;
}

export function registerNetworkCommands(program: Command, io: CliIo): void {
  const network = program
    .command('network')
    .description('the peer-to-peer network: browse sellers, inspect one, run a bootstrap node');
  registerNetworkBrowse(network, io);
  registerNetworkPeer(network, io);
  registerNetworkBootstrap(network, io);
  registerNetworkStatus(network, io);
}

/** Registers `svc network browse`. */
function registerNetworkBrowse(network: Command, io: CliIo): void {
  network
    .command('browse')
    .description(
      "list sellers and their offers (from the running buyer's cache, else straight from the network)",
    )
    .option('--services', 'one row per service instead of one per peer')
    .option('--service <text>', 'only peers offering a service whose id contains <text>')
    .addOption(new Option('--sort <key>', 'order of peers').choices(BROWSE_ORDERS).default('score'))
    .option(
      '--tag <tag>',
      'only services in this category (repeatable)',
      (tag: string, all: string[]) => [...all, tag],
      [],
    )
    .option('--top <n>', 'show at most n peers', positiveInt, 20)
    .option('--direct', 'ask the network even when a buyer is running')
    .option('--indexer <url>', 'read the public snapshot of an indexer (GET <url>/stats) instead')
    .option('--wait <seconds>', 'how long to look for peers on the network', positiveInt, 8)
    .addHelpText(
      'after',
      '\nReputation (score, volume, sessions) is shown only when the source knows it; unknown values are null\nand those sorts then fall back to price.\n\nExamples:\n  svc network browse\n  svc network browse --services --service llama --sort price\n  svc network browse --tag chat --top 5 --json\n  svc network browse --indexer http://127.0.0.1:8380 --sort volume',
    )
    .action(async (flags: BrowseFlags, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { config } = ctx.loadConfig();
      const [{ browsePeers, collectPeers, peersFromIndexer }, { printBrowse }] = await Promise.all([
        import('../../../network/index.js'),
        import('./format.js'),
      ]);
      const collected =
        flags.indexer !== undefined
          ? await peersFromIndexer(flags.indexer)
          : await collectPeers({
              network: config.network,
              buyerPort: config.buyer.port,
              direct: flags.direct ?? false,
              waitMs: flags.wait * 1000,
              logger: ctx.logger,
            });
      const result = browsePeers(collected.peers, {
        source: collected.source,
        onChainStatsRefreshedAt: collected.onChainStatsRefreshedAt ?? null,
        sort: flags.sort,
        ...(flags.service !== undefined ? { service: flags.service } : {}),
        tags: flags.tag,
        top: flags.top,
      });
      if (collected.problem) io.stderr(`${collected.problem}\n`);
      if (ctx.json) printJson(io, result);
      else printBrowse(io, result, flags.services ?? false);
    });
}

/** Registers `svc network peer`. */
function registerNetworkPeer(network: Command, io: CliIo): void {
  network
    .command('peer')
    .description('show one peer in full: its signed record, services and prices')
    .argument('<peer_id>', '40 hex characters, with or without 0x')
    .option('--direct', 'ask the network even when a buyer is running')
    .option('--wait <seconds>', 'how long to look for the peer on the network', positiveInt, 8)
    .addHelpText(
      'after',
      '\nExamples:\n  svc network peer 0x2c7536e3605d9c16a7a3d7b1898e529396a65c23\n  svc network peer 2c7536e3605d9c16a7a3d7b1898e529396a65c23 --json',
    )
    .action(
      async (peerIdText: string, flags: { direct?: boolean; wait: number }, command: Command) => {
        const ctx = CliContext.of(command, io);
        const match = /^(?:0x)?([0-9a-fA-F]{40})$/.exec(peerIdText.trim());
        if (!match)
          throw new CliError(
            `"${peerIdText}" is not a peer id: expected 40 hex characters, with or without 0x`,
            2,
          );
        const peerId = match[1]!.toLowerCase();
        const { config } = ctx.loadConfig();
        const [{ browsePeers, collectPeers }, { printPeer }] = await Promise.all([
          import('../../../network/index.js'),
          import('./format.js'),
        ]);
        const collected = await collectPeers({
          network: config.network,
          buyerPort: config.buyer.port,
          direct: flags.direct ?? false,
          waitMs: flags.wait * 1000,
          logger: ctx.logger,
        });
        const found = browsePeers(collected.peers, {
          source: collected.source,
          top: Number.MAX_SAFE_INTEGER,
        }).peers.find((peer) => peer.peerId === peerId);
        if (!found) {
          throw new CliError(
            `peer ${peerId} not found (source ${collected.source}${collected.problem ? `; ${collected.problem}` : ''}). Run \`svc network browse\` to list peers.`,
          );
        }
        if (ctx.json) printJson(io, { source: collected.source, peer: found });
        else printPeer(io, found);
      },
    );
}

/** Registers `svc network bootstrap`. */
function registerNetworkBootstrap(network: Command, io: CliIo): void {
  network
    .command('bootstrap')
    // Every bootstrap node is also a circuit relay for sellers behind NAT (decision 141).
    .alias('relay')
    .description(
      'run a node that helps others find each other and relays for sellers behind NAT (prints its address; Ctrl-C stops it)',
    )
    .option(
      '--port <port>',
      'TCP port to listen on (default: network.listen from the config)',
      positiveInt,
    )
    .option('--listen <multiaddr...>', 'listen addresses (overrides --port)')
    .option('--announce <multiaddr...>', 'addresses to announce to others (e.g. the public IP)')
    .addHelpText(
      'after',
      '\nThe node uses the default identity of the data dir, so its address stays the same across restarts.\nGive the printed /p2p/ address to others as network.bootstrap.\n\nExamples:\n  svc network bootstrap --port 4001\n  svc network bootstrap --listen /ip4/0.0.0.0/tcp/4001 --announce /ip4/203.0.113.5/tcp/4001',
    )
    .action(
      async (
        flags: { port?: number; listen?: string[]; announce?: string[] },
        command: Command,
      ) => {
        const ctx = CliContext.of(command, io);
        const { config } = ctx.loadConfig();
        const listen =
          flags.listen ??
          (flags.port !== undefined ? [`/ip4/0.0.0.0/tcp/${flags.port}`] : config.network.listen);
        const identity = (await ctx.identities()).loadDefault();
        const { startBootstrapNode } = await import('../../../node/index.js');
        const node = await startBootstrapNode({
          identity,
          logger: ctx.logger,
          network: {
            ...config.network,
            listen,
            announce: flags.announce ?? config.network.announce,
          },
        });
        const addresses = node.multiaddrs();
        if (ctx.json)
          printJson(io, {
            peerId: node.peerId,
            libp2pPeerId: node.libp2pPeerId.toString(),
            multiaddrs: addresses,
          });
        else {
          io.stdout(`bootstrap node ${node.peerId} running; give others one of these addresses:\n`);
          for (const address of addresses) io.stdout(`  ${address}\n`);
          io.stdout('press Ctrl-C to stop\n');
        }
        await waitForShutdown();
        await node.stop();
        if (!ctx.json) io.stdout('bootstrap node stopped\n');
      },
    );
}
