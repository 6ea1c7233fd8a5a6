/**
 * `svc tunnel relay`: a public HTTP endpoint for gateways that cannot be reached. Gateways dial
 * the relay's libp2p address and register; the Noise handshake proves each gateway's peer id, so
 * `<public-url>/<peer-id>/v1/...` can only ever reach the gateway holding that key. Requests are
 * forwarded over encrypted streams; keys, budgets and logs stay at the gateway.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ForwardedTrust } from '../gateway/index.js';
import type { PeerId } from '../identity/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import {
  LibP2pTransport,
  peerIdFromLibp2p,
  type RequestHandler,
  type SvcNode,
  serveRequests,
} from '../network/index.js';
import { REGISTER_PATH, TUNNEL_HTTP_PROTOCOL, TUNNEL_REGISTER_PROTOCOL } from './protocol.js';
import { GatewayRegistry } from './registry.js';
import { type RelayHttpDeps, relayRequest } from './relayHttp.js';

export interface TunnelRelayOptions {
  /** The URL clients use, e.g. https://tunnel.example.com (TLS is terminated in front). */
  publicUrl: string;
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

/** The relay on a libp2p node: registrations in, client requests out to registered gateways. */
export interface TunnelRelay {
  /** The public URL, without a trailing slash. */
  publicUrl: string;
  /** Serves one client request (the public HTTP server's handler). */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Gateways registered now. */
  gateways(): PeerId[];
  /** Stops serving registrations on the node (the node itself is its owner's to stop). */
  detach(): Promise<void>;
}

export const DEFAULT_TUNNEL_BODY_LIMIT_BYTES = 32 * 1024 * 1024;
export const DEFAULT_TUNNEL_STREAMS_PER_GATEWAY = 64;

/**
 * Checks the options before anything starts, so a bad URL or proxy list leaves nothing running;
 * `attach` then serves the registration protocol on a node and forwards to the gateways.
 */
export function tunnelRelay(options: TunnelRelayOptions): {
  attach(node: SvcNode): Promise<TunnelRelay>;
} {
  const logger = options.logger ?? silentLogger();
  const publicUrl = parsePublicUrl(options.publicUrl);
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_TUNNEL_BODY_LIMIT_BYTES;
  const allowed = new Set(options.allowGateways ?? []);
  const forwarded = new ForwardedTrust(options.trustedProxies ?? []);
  const base = publicUrl.toString().replace(/\/$/, '');
  return {
    async attach(node) {
      const registry = new GatewayRegistry(
        options.maxStreamsPerGateway ?? DEFAULT_TUNNEL_STREAMS_PER_GATEWAY,
      );
      const registration = await serveRequests(
        node,
        registrationHandler(node, registry, allowed, base, logger),
        { protocol: TUNNEL_REGISTER_PROTOCOL, uploadLimitBytes: () => 1024, maxInboundStreams: 4 },
      );
      const onDisconnect = (event: CustomEvent<import('@libp2p/interface').PeerId>) => {
        registry.disconnected(event.detail);
      };
      node.libp2p.addEventListener('peer:disconnect', onDisconnect);
      const deps: RelayHttpDeps = {
        registry,
        transport: gatewayTransport(node, registry, bodyLimitBytes),
        publicUrl,
        bodyLimitBytes,
        forwarded,
      };
      return {
        publicUrl: base,
        handle: (req, res) => {
          void relayRequest(deps, req, res);
        },
        gateways: () => registry.ids(),
        async detach() {
          node.libp2p.removeEventListener('peer:disconnect', onDisconnect);
          await registration.stop();
        },
      };
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

function jsonReply(status: number, value: unknown) {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: new TextEncoder().encode(JSON.stringify(value)),
  };
}
