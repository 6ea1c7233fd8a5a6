/**
 * `svc tunnel relay`: a public HTTP endpoint for gateways that cannot be reached. Gateways dial
 * the relay's libp2p address and register; the Noise handshake proves each gateway's peer id, so
 * `<public-url>/<peer-id>/v1/...` can only ever reach the gateway holding that key. Requests are
 * forwarded over encrypted streams; keys, budgets and logs stay at the gateway.
 */
import { createServer, type Server } from 'node:http';
import type { Hex } from 'viem';
import type { NetworkConfig } from '../config/index.js';
import { ForwardedTrust } from '../gateway/index.js';
import { API_INGRESS, boundIngress, localUrl } from '../http/index.js';
import type { PeerId } from '../identity/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import {
  createSvcNode,
  LibP2pTransport,
  peerIdFromLibp2p,
  type RequestHandler,
  type RequestServer,
  type SvcNode,
  serveRequests,
} from '../network/index.js';
import { REGISTER_PATH, TUNNEL_HTTP_PROTOCOL, TUNNEL_REGISTER_PROTOCOL } from './protocol.js';
import { GatewayRegistry } from './registry.js';
import { type RelayHttpDeps, relayRequest } from './relayHttp.js';

export interface TunnelRelayOptions {
  /** The URL clients use, e.g. https://tunnel.example.com (TLS is terminated in front). */
  publicUrl: string;
  /** HTTP interface and port (0 = a free port). */
  host: string;
  port: number;
  /** libp2p settings; `listen` is where gateways dial in. */
  network: NetworkConfig;
  /** The relay node's key (stable: gateways name it in their --tunnel multiaddr). */
  privateKey: Hex;
  /** Largest request body forwarded (413 above). */
  bodyLimitBytes?: number;
  /** Requests open at once per gateway (503 tunnel_busy above). */
  maxStreamsPerGateway?: number;
  /** Only these gateways may register; empty = any gateway (each only under its own id). */
  allowGateways?: readonly PeerId[];
  /** Proxies in front of the relay whose X-Forwarded-For is believed. */
  trustedProxies?: readonly string[];
  logger?: Logger;
}

export interface RunningTunnelRelay {
  /** Local HTTP URL the relay listens on. */
  url: string;
  publicUrl: string;
  /** libp2p addresses gateways pass to `svc gateway start --tunnel`. */
  multiaddrs(): string[];
  /** Gateways registered now. */
  gateways(): PeerId[];
  stop(): Promise<void>;
}

export const DEFAULT_TUNNEL_BODY_LIMIT_BYTES = 32 * 1024 * 1024;
export const DEFAULT_TUNNEL_STREAMS_PER_GATEWAY = 64;

/** Starts a tunnel relay: its libp2p node, the registration protocol and the HTTP server. */
export async function startTunnelRelay(options: TunnelRelayOptions): Promise<RunningTunnelRelay> {
  const logger = options.logger ?? silentLogger();
  const publicUrl = parsePublicUrl(options.publicUrl);
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_TUNNEL_BODY_LIMIT_BYTES;
  const registry = new GatewayRegistry(
    options.maxStreamsPerGateway ?? DEFAULT_TUNNEL_STREAMS_PER_GATEWAY,
  );
  const allowed = new Set(options.allowGateways ?? []);
  // Checked before anything starts, so a bad list leaves nothing running.
  const forwarded = new ForwardedTrust(options.trustedProxies ?? []);
  const node = await createSvcNode({
    identity: { privateKey: options.privateKey },
    config: { ...options.network, bootstrap: [] },
    // Listens for gateways and serves no DHT: a relay only answers the tunnel protocols.
    role: 'buyer',
    logger,
  });
  const base = publicUrl.toString().replace(/\/$/, '');
  const registration = await serveRegistrations(
    node,
    registrationHandler(node, registry, allowed, base, logger),
  );
  const onDisconnect = (event: CustomEvent<import('@libp2p/interface').PeerId>) => {
    registry.disconnected(event.detail);
  };
  node.libp2p.addEventListener('peer:disconnect', onDisconnect);
  const transport = gatewayTransport(node, registry, bodyLimitBytes);
  let server: Awaited<ReturnType<typeof listenHttp>>;
  try {
    server = await listenHttp(node, options, {
      registry,
      transport,
      publicUrl,
      bodyLimitBytes,
      forwarded,
    });
  } catch (error) {
    // A port in use: nothing may be left running behind the error.
    node.libp2p.removeEventListener('peer:disconnect', onDisconnect);
    await registration.stop();
    await node.stop();
    throw error;
  }
  return {
    url: localUrl(server, options.host),
    publicUrl: base,
    multiaddrs: () => node.multiaddrs(),
    gateways: () => registry.ids(),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      node.libp2p.removeEventListener('peer:disconnect', onDisconnect);
      await registration.stop();
      await node.stop();
    },
  };
}

function parsePublicUrl(text: string): URL {
  const publicUrl = new URL(text);
  if (publicUrl.protocol !== 'https:' && publicUrl.protocol !== 'http:') {
    throw new TypeError('--public-url must be an http(s) URL');
  }
  return publicUrl;
}

/** Registers a gateway under the peer id its connection proved (only allowed ones, when listed). */
function registrationHandler(
  node: SvcNode,
  registry: GatewayRegistry,
  allowed: ReadonlySet<PeerId>,
  base: string,
  logger: Logger,
): RequestHandler {
  return async (request) => {
    const conns = node.libp2p
      .getConnections()
      .filter((c) => peerIdFromLibp2p(c.remotePeer) === request.peerId);
    const remote = conns[0]?.remotePeer;
    if (request.path !== REGISTER_PATH || remote === undefined) {
      return jsonReply(404, { error: { code: 'not_found', message: 'unknown request' } });
    }
    if (allowed.size > 0 && !allowed.has(request.peerId)) {
      logger.warn({ gateway: request.peerId }, 'tunnel registration refused');
      return jsonReply(403, {
        error: { code: 'forbidden', message: 'this relay does not serve that gateway' },
      });
    }
    registry.register(request.peerId, remote);
    logger.info({ gateway: request.peerId }, 'gateway registered');
    return jsonReply(200, { gatewayId: request.peerId, baseUrl: `${base}/${request.peerId}` });
  };
}

/** Serves the registration protocol; stops the node when that fails. */
async function serveRegistrations(node: SvcNode, handler: RequestHandler): Promise<RequestServer> {
  try {
    return await serveRequests(node, handler, {
      protocol: TUNNEL_REGISTER_PROTOCOL,
      uploadLimitBytes: () => 1024,
      maxInboundStreams: 4,
    });
  } catch (error) {
    await node.stop();
    throw error;
  }
}

/** Streams to registered gateways only, by the id they registered under. */
function gatewayTransport(
  node: SvcNode,
  registry: GatewayRegistry,
  bodyLimitBytes: number,
): LibP2pTransport {
  return new LibP2pTransport({
    node,
    protocol: TUNNEL_HTTP_PROTOCOL,
    router: {
      route: (peerId) => {
        const libp2pPeerId = registry.lookup(peerId);
        return libp2pPeerId === undefined
          ? undefined
          : { libp2pPeerId, addresses: [], uploadLimitBytes: bodyLimitBytes };
      },
    },
  });
}

/** The public HTTP server, listening; stops the node when it cannot listen. */
async function listenHttp(
  node: SvcNode,
  options: TunnelRelayOptions,
  deps: RelayHttpDeps,
): Promise<Server> {
  const server = createServer((req, res) => {
    void relayRequest(deps, req, res);
  });
  // The relay is public: the gateway's own bounds on a client (docs/guide/gateway.md "Gateway").
  boundIngress(server, API_INGRESS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  }).catch(async (error: unknown) => {
    await node.stop();
    throw error;
  });
  return server;
}

function jsonReply(status: number, value: unknown) {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: new TextEncoder().encode(JSON.stringify(value)),
  };
}
