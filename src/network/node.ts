/**
 * The svc libp2p node: TCP + Noise + Yamux, a private Kad-DHT (`network.dhtProtocol`),
 * identify and ping. Its key is the identity key, so `peerId` (EVM address) and the libp2p
 * PeerId are the same key. Bootstrap addresses are dialled at start and re-dialled while the
 * node has no connection at all.
 */
import { yamux } from '@chainsafe/libp2p-yamux';
import { type Identify, identify } from '@libp2p/identify';
import type { Libp2p, PeerId as Libp2pPeerId } from '@libp2p/interface';
import { type KadDHT, kadDHT, passthroughMapper } from '@libp2p/kad-dht';
import { type Ping, ping } from '@libp2p/ping';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p, type Libp2pOptions } from 'libp2p';
import type { Hex } from 'viem';
import type { NetworkConfig } from '../config/index.js';
import type { PeerId } from '../identity/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import { corkedTcp } from './corkedTcp.js';
import { useFastSecp256k1 } from './fastSecp256k1.js';
import { dialingFrom, holePunchPort } from './holePunch.js';
import { libp2pKeyFromIdentity, peerIdFromLibp2p } from './keys.js';
import { noiseCrypto } from './noiseCrypto.js';
import { quietNoise } from './noiseFraming.js';
import { type PeerExchange, peerExchange } from './peerExchange.js';
import { fewerPeerStoreWrites } from './peerStoreWrites.js';
import {
  connectionOpened,
  type PreNegotiation,
  preNegotiatedProtocols,
  preNegotiating,
} from './preNegotiated.js';
import { skipRepeatedProtocolMerges } from './protocolMerges.js';
import { libp2pLogger } from './quietLogger.js';
import { reachabilityServices, reachabilityTransports } from './reachability.js';
import { type RouteDialer, routeDialer } from './routeDial.js';
import type { NodeRole } from './types.js';
import { installLazyWindowUpdates } from './yamuxWindow.js';

/** What the node is for: sellers and bootstrap nodes serve the DHT, others only query it. */

export interface SvcServices {
  dht: KadDHT;
  ping: Ping;
  identify: Identify;
  peerExchange: PeerExchange;
  routeDialer: RouteDialer;
  [key: string]: unknown;
}

export interface CreateSvcNodeOptions {
  /** The identity's private key (same key as `IdentityStore` loads). */
  identity: { privateKey: Hex };
  config: NetworkConfig;
  role: NodeRole;
  logger?: Logger;
}

/** A running (or startable) svc node. */
export interface SvcNode {
  readonly role: NodeRole;
  /** Our peer id (EVM address, 40 hex). */
  readonly peerId: PeerId;
  readonly libp2pPeerId: Libp2pPeerId;
  readonly libp2p: Libp2p<SvcServices>;
  readonly config: NetworkConfig;
  readonly logger: Logger;
  /** Addresses others can dial, each ending in /p2p/<libp2p id>. */
  multiaddrs(): string[];
  /** Dials the bootstrap addresses; resolves with how many answered. */
  dialBootstrap(): Promise<number>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const BOOTSTRAP_RETRY_MS = 10_000;
/** First retries after a failed bootstrap dial come sooner (1, 2, 4, 8 s), then every 10 s. */
const BOOTSTRAP_FIRST_RETRY_MS = 1_000;
const INBOUND_PER_SECOND_PER_HOST = 100;
/**
 * Identify runs this long after a connection opens rather than at once (decision 192): at once,
 * both ends' identify (key parsing, a signed peer record each way, peer store writes) competes
 * with the request that opened the connection for the same CPU.
 */
const IDENTIFY_DELAY_MS = 100;

/** Creates (and starts) a node for `role`. */
export async function createSvcNode(options: CreateSvcNodeOptions): Promise<SvcNode> {
  const { config, role } = options;
  const logger = options.logger ?? silentLogger();
  installLazyWindowUpdates();
  useFastSecp256k1();
  const preNegotiated: PreNegotiation = { handlers: new Map() };
  const libp2p = await createLibp2p<SvcServices>(libp2pInit(options, preNegotiated));
  preNegotiated.connections = () => libp2p.getConnections();
  libp2p.addEventListener('connection:open', (event) => connectionOpened(event.detail));
  preNegotiatedProtocols.set(libp2p, preNegotiated);
  skipRepeatedProtocolMerges(libp2p);
  fewerPeerStoreWrites(libp2p);
  identifyAfterOpen(libp2p);
  const ourPeerId = peerIdFromLibp2p(libp2p.peerId);
  if (ourPeerId === undefined) throw new TypeError('identity key did not give a secp256k1 PeerId');
  const bootstrap = bootstrapDialer(libp2p, config, logger);
  const node: SvcNode = {
    role,
    peerId: ourPeerId,
    libp2pPeerId: libp2p.peerId,
    libp2p,
    config,
    logger,
    multiaddrs: () => libp2p.getMultiaddrs().map((addr) => addr.toString()),
    dialBootstrap: () => bootstrap.dial(),
    async start() {
      await libp2p.start();
      bootstrap.start();
    },
    async stop() {
      bootstrap.stop();
      await libp2p.stop();
    },
  };
  await node.start();
  return node;
}

/** Identifies each new connection's peer IDENTIFY_DELAY_MS after it opens, if still open. */
function identifyAfterOpen(libp2p: Libp2p<SvcServices>): void {
  libp2p.addEventListener('connection:open', (event) => {
    const connection = event.detail;
    const timer = setTimeout(() => {
      if (connection.status !== 'open') return;
      libp2p.services.identify.identify(connection).catch(() => undefined);
    }, IDENTIFY_DELAY_MS);
    timer.unref();
  });
}

/** The libp2p configuration of a node: transports, limits and the services every role runs. */
function libp2pInit(
  options: CreateSvcNodeOptions,
  preNegotiated: PreNegotiation,
): Libp2pOptions<SvcServices> {
  const { config, role } = options;
  const serveDht = role === 'seller' || role === 'bootstrap';
  const quiet = libp2pLogger();
  const holePunch = role === 'client' ? undefined : (config.holePunchPort ?? holePunchPort());
  return {
    privateKey: libp2pKeyFromIdentity(options.identity.privateKey),
    ...(quiet ? { logger: quiet } : {}),
    addresses: {
      listen: role === 'client' ? [] : config.listen,
      announce: config.announce,
    },
    transports: [dialingFrom(corkedTcp(), holePunch), ...reachabilityTransports(role)],
    connectionEncrypters: [quietNoise({ crypto: noiseCrypto })],
    // A paused stream (backpressure) can still receive up to one window; keep the read buffer
    // above the window so a slow reader is never reset for being slow.
    // Request streams that open with their multistream-select proposal skip libp2p's
    // negotiation (preNegotiated.ts).
    streamMuxers: [
      preNegotiating(
        yamux({
          // Yamux's keep-alive pings each new connection from both ends at once (a frame each
          // way and its answer, two Noise messages and writes inside the first request) and then
          // every 30 s; nothing reads its round-trip time, and libp2p's connection monitor
          // already pings every 10 s and drops a connection that stops answering
          // (docs/decisions/216-a-dial-by-route.md).
          enableKeepAlive: false,
          streamOptions: {
            maxStreamWindowSize: 4 * 1024 * 1024,
            maxReadBufferLength: 8 * 1024 * 1024,
          },
        }),
        preNegotiated,
      ),
    ],
    // A ping's adaptive timeout capped below two of the monitor's 10 s intervals (see `ping`).
    connectionMonitor: { pingTimeout: { maxTimeout: 19_000 } },
    // libp2p's default admits 5 inbound connections per second per remote IP and resets the rest:
    // a bootstrap node or seller behind one address (a NAT, a datacenter, loopback) then refuses
    // a newcomer for tens of seconds (decision 012). Servers accept bursts; the total stays capped.
    connectionManager: {
      maxConnections: 300,
      inboundConnectionThreshold: INBOUND_PER_SECOND_PER_HOST,
      maxIncomingPendingConnections: 64,
    },
    services: {
      // Run on each connection by identifyAfterOpen, a moment after it opens.
      identify: identify({ runOnConnectionOpen: false }),
      // libp2p's connection monitor pings every connection every 10 s (its pings time out after
      // 5–60 s, adapted to the link) and aborts the connection when one fails. With one outbound
      // ping stream allowed, a ping still in flight made the next fail on the limit, and a slow
      // but live connection was aborted with its requests. Two may be in flight; each times out
      // within two intervals (`connectionMonitor`), so a third never starts; a listener accepts
      // two (the ping spec's SHOULD).
      ping: ping({ maxOutboundStreams: 2 }),
      // Every role serves `/svc/peers/1`, bootstrap nodes above all.
      peerExchange: peerExchange(),
      // A buyer's dial to a seller whose addresses it holds skips the dial queue (routeDial.ts).
      routeDialer: routeDialer(),
      dht: kadDHT({
        protocol: config.dhtProtocol,
        clientMode: !serveDht,
        // A private network on LANs and loopback must keep private addresses.
        peerInfoMapper: passthroughMapper,
        initialQuerySelfInterval: 500,
      }),
      ...reachabilityServices(role, holePunch),
    },
    start: false,
  };
}

/**
 * Dials the configured bootstrap nodes, and while the node is running and connected to nobody,
 * dials them again: soon at first (1, 2, 4, 8 s), then every 10 s.
 */
function bootstrapDialer(
  libp2p: Libp2p<SvcServices>,
  config: NetworkConfig,
  logger: Logger,
): { dial(): Promise<number>; start(): void; stop(): void } {
  let retry: NodeJS.Timeout | undefined;
  let running = false;
  const addresses = () =>
    config.bootstrap
      .map((text) => {
        try {
          return multiaddr(text);
        } catch {
          logger.warn({ address: text }, 'ignoring an invalid bootstrap multiaddr');
          return undefined;
        }
      })
      .filter(
        (addr) =>
          addr !== undefined && addr.getComponents().at(-1)?.value !== libp2p.peerId.toString(),
      );
  const dial = async () => {
    const results = await Promise.allSettled(
      addresses().map((addr) => libp2p.dial(addr!, { signal: AbortSignal.timeout(10_000) })),
    );
    for (const result of results) {
      if (result.status === 'rejected') {
        logger.debug({ err: String(result.reason) }, 'bootstrap dial failed');
      }
    }
    return results.filter((r) => r.status === 'fulfilled').length;
  };
  return {
    dial,
    start() {
      if (config.bootstrap.length === 0) return;
      running = true;
      let delay = BOOTSTRAP_FIRST_RETRY_MS;
      const attempt = async () => {
        if (libp2p.getConnections().length === 0) await dial();
        if (!running) return;
        retry = setTimeout(() => void attempt(), delay);
        retry.unref();
        delay = Math.min(delay * 2, BOOTSTRAP_RETRY_MS);
      };
      void attempt();
    },
    stop() {
      running = false;
      if (retry) clearTimeout(retry);
      retry = undefined;
    },
  };
}
