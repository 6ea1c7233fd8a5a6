/**
 * The gateway's side of a tunnel: a libp2p node that only dials out to the relay, registers,
 * and serves `/svc/tunnel/http/1` streams from that relay alone by replaying each request
 * against the gateway's own HTTP server on loopback. The replay carries the gateway's
 * in-process tunnel token, so the gateway believes the relay's X-Forwarded-* headers
 * (src/gateway/server/forwarded.ts); authentication, budgets and logs run exactly as for a
 * local client. A cancelled stream aborts the loopback request, which the gateway sees as its
 * client going away.
 */
import type { PeerId as Libp2pPeerId } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { type Multiaddr, multiaddr } from '@multiformats/multiaddr';
import { Pool } from 'undici';
import type { Hex } from 'viem';
import type { NetworkConfig } from '../config/index.js';
import { TUNNEL_TOKEN_HEADER } from '../gateway/index.js';
import type { PeerId } from '../identity/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import {
  createSvcNode,
  LibP2pTransport,
  peerIdFromLibp2p,
  type RequestHandler,
  type SvcNode,
  serveRequests,
} from '../network/index.js';
import {
  flattenHeaders,
  REGISTER_PATH,
  type RegisterReply,
  registerReplySchema,
  TUNNEL_HTTP_PROTOCOL,
  TUNNEL_REGISTER_PROTOCOL,
} from './protocol.js';

export interface GatewayTunnelOptions {
  /** The relay's libp2p address, ending in /p2p/<relay id> (that id is what Noise verifies). */
  relay: string;
  /** The gateway's own local URL. */
  gatewayUrl: string;
  /** The gateway's tunnel token (RunningGateway.tunnelToken). */
  tunnelToken: string;
  network: NetworkConfig;
  /** Key of the tunnel node; its peer id is the gateway's id at the relay. */
  privateKey: Hex;
  /** Largest request body accepted from the relay. */
  bodyLimitBytes: number;
  logger?: Logger;
}

export interface RunningGatewayTunnel {
  gatewayId: PeerId;
  /** Anthropic-style base (no /v1); the OpenAI-style base is `${baseUrl}/v1`. */
  baseUrl: string;
  stop(): Promise<void>;
}

const KEEPALIVE_MS = 25_000;
const RETRY_MAX_MS = 10_000;

/** Connects to the relay, registers, and keeps the registration alive until stopped. */
export async function startGatewayTunnel(
  options: GatewayTunnelOptions,
): Promise<RunningGatewayTunnel> {
  const logger = options.logger ?? silentLogger();
  const relay = parseRelay(options.relay);
  const node = await createSvcNode({
    identity: { privateKey: options.privateKey },
    config: { ...options.network, listen: [], announce: [], bootstrap: [] },
    role: 'client',
    logger,
  });
  const loopback = new Pool(options.gatewayUrl, { connections: 64, pipelining: 1 });
  let server: Awaited<ReturnType<typeof serveRequests>>;
  try {
    server = await serveRequests(node, replayOnLoopback(relay.id, loopback, options.tunnelToken), {
      protocol: TUNNEL_HTTP_PROTOCOL,
      uploadLimitBytes: () => options.bodyLimitBytes,
    });
  } catch (error) {
    // Nothing may be left running behind the error.
    await node.stop();
    await loopback.close();
    throw error;
  }
  const register = registration(node, relay);
  const upkeep = keepRegistered(node, relay, register, logger);
  const stopAll = async () => {
    upkeep.stop();
    await server.stop();
    await node.stop();
    await loopback.close();
  };
  const registered = await registerOrStop(register, node.peerId, stopAll);
  return { gatewayId: node.peerId, baseUrl: registered.baseUrl, stop: stopAll };
}

/** The relay's address and its peer id in both forms. */
interface Relay {
  addr: Multiaddr;
  libp2pId: Libp2pPeerId;
  id: PeerId;
}

function parseRelay(relay: string): Relay {
  const addr = multiaddr(relay);
  const relayText = addr.getComponents().findLast((c) => c.name === 'p2p')?.value;
  if (relayText === undefined) {
    throw new TypeError('--tunnel must be a multiaddr ending in /p2p/<relay peer id>');
  }
  const libp2pId: Libp2pPeerId = peerIdFromString(relayText);
  const id = peerIdFromLibp2p(libp2pId);
  if (id === undefined) throw new TypeError('the relay peer id is not a secp256k1 key');
  return { addr, libp2pId, id };
}

/** Replays the relay's requests (only the relay's) against the gateway, with the tunnel token. */
function replayOnLoopback(relayId: PeerId, loopback: Pool, tunnelToken: string): RequestHandler {
  return async (request) => {
    if (request.peerId !== relayId) {
      return {
        status: 403,
        headers: { 'content-type': 'application/json' },
        body: new TextEncoder().encode('{"error":{"code":"forbidden"}}'),
      };
    }
    const headers = flattenHeaders(request.headers, (name) => name === TUNNEL_TOKEN_HEADER);
    headers[TUNNEL_TOKEN_HEADER] = tunnelToken;
    const answer = await loopback.request({
      method: request.method as 'GET',
      path: request.path,
      headers,
      body: request.body.byteLength > 0 ? request.body : null,
      signal: request.signal,
    });
    return {
      status: answer.statusCode,
      headers: flattenHeaders(answer.headers, () => false),
      body: answer.body,
    };
  };
}

/** One registration call to the relay, answering the relay's reply. */
function registration(node: SvcNode, relay: Relay): () => Promise<RegisterReply> {
  const transport = new LibP2pTransport({
    node,
    protocol: TUNNEL_REGISTER_PROTOCOL,
    headTimeoutMs: 10_000,
    router: {
      route: () => ({
        libp2pPeerId: relay.libp2pId,
        addresses: [relay.addr],
        uploadLimitBytes: 1024,
      }),
    },
  });
  return async () => {
    const reply = await transport.request(relay.id, {
      method: 'POST',
      path: REGISTER_PATH,
      headers: {},
      body: new Uint8Array(0),
      signal: AbortSignal.timeout(15_000),
    });
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of reply.body) {
      size += chunk.byteLength;
      if (size > 16 * 1024) throw new Error('the relay answered too much');
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (reply.status !== 200) throw new Error(`the relay refused registration: ${text}`);
    return registerReplySchema.parse(JSON.parse(text));
  };
}

/**
 * Registers again after the relay connection drops (soon at first, then up to every 10 s) and
 * pings the relay so idle NAT mappings do not expire. `stop()` ends both.
 */
function keepRegistered(
  node: SvcNode,
  relay: Relay,
  register: () => Promise<RegisterReply>,
  logger: Logger,
): { stop(): void } {
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = 1_000;
  const reconnect = () => {
    if (stopped || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      register()
        .then(() => {
          delay = 1_000;
          logger.info({ relay: relay.id }, 'tunnel registered again');
        })
        .catch((error: unknown) => {
          logger.warn({ err: String(error) }, 'tunnel registration failed; retrying');
          delay = Math.min(delay * 2, RETRY_MAX_MS);
          reconnect();
        });
    }, delay);
    retry.unref();
  };
  const onDisconnect = (event: CustomEvent<Libp2pPeerId>) => {
    if (event.detail.equals(relay.libp2pId)) reconnect();
  };
  node.libp2p.addEventListener('peer:disconnect', onDisconnect);
  const keepalive = setInterval(() => {
    node.libp2p.services.ping.ping(relay.libp2pId).catch(() => undefined);
  }, KEEPALIVE_MS);
  keepalive.unref();
  return {
    stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      clearInterval(keepalive);
      node.libp2p.removeEventListener('peer:disconnect', onDisconnect);
    },
  };
}

/** The first registration; any failure (or a reply for another gateway id) stops everything. */
async function registerOrStop(
  register: () => Promise<RegisterReply>,
  gatewayId: PeerId,
  stopAll: () => Promise<void>,
): Promise<RegisterReply> {
  let registered: RegisterReply;
  try {
    registered = await register();
  } catch (error) {
    await stopAll();
    throw error;
  }
  if (registered.gatewayId !== gatewayId) {
    await stopAll();
    throw new Error('the relay registered a different gateway id');
  }
  return registered;
}
