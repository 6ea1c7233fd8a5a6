/**
 * One public HTTP request at the tunnel relay: `<public-url>/<gateway-id>/v1/...` is checked
 * (gateway registered, under its cap, body within the limit), sent to the gateway over a
 * `/svc/tunnel/http/1` stream, and the answer is written back chunk by chunk as it arrives
 * (backpressure both ways). A client that goes away resets the stream: the gateway sees the
 * cancel as its own client going away.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorStyleForPath, isSvcError, SvcError, toSvcError } from '../errors/index.js';
import type { ForwardedTrust } from '../gateway/index.js';
import { sendError } from '../http/index.js';
import { type PeerId, parsePeerId } from '../identity/index.js';
import { type LibP2pTransport, TransportError } from '../network/index.js';
import { flattenHeaders } from './protocol.js';
import type { GatewayRegistry } from './registry.js';

export interface RelayHttpDeps {
  registry: GatewayRegistry;
  transport: LibP2pTransport;
  /** The relay's public base, without a trailing slash. */
  publicUrl: URL;
  bodyLimitBytes: number;
  /** Whose X-Forwarded-For the relay itself believes (a TLS terminator in front of it). */
  forwarded: ForwardedTrust;
}

const GATEWAY_PATH = /^\/(?:0x)?([0-9a-fA-F]{40})(\/v1(?:\/[^?#]*)?)$/;

/** Handles one request at the relay; never throws. */
export async function relayRequest(
  deps: RelayHttpDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const [pathname = '/', query] = splitQuery(req.url ?? '/');
  const match = GATEWAY_PATH.exec(pathname);
  const forwardedPath = match?.[2] ?? pathname;
  const style = errorStyleForPath(forwardedPath);
  if (!match) {
    sendError(res, new SvcError('not_found'), style);
    return;
  }
  const gatewayId: PeerId = parsePeerId(match[1]!);
  const slot = deps.registry.acquire(gatewayId);
  if (slot !== 'ok') {
    sendError(
      res,
      slot === 'offline'
        ? new SvcError('gateway_offline', {
            message: `Gateway ${gatewayId} is not connected to this tunnel relay. Is \`svc gateway start --tunnel\` running?`,
          })
        : new SvcError('tunnel_busy', { headers: { 'retry-after': '1' } }),
      style,
    );
    return;
  }
  const controller = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new Error('client went away'));
  };
  res.once('close', onClose);
  try {
    const body = await readBody(req, deps.bodyLimitBytes);
    const client = deps.forwarded.origin(req);
    const prefix = `${deps.publicUrl.pathname.replace(/\/$/, '')}/${gatewayId}`;
    const headers = flattenHeaders(req.headers, (name) => name.startsWith('x-forwarded-'));
    headers['x-forwarded-for'] = client.address;
    headers['x-forwarded-proto'] = deps.publicUrl.protocol.replace(':', '');
    headers['x-forwarded-host'] = deps.publicUrl.host;
    headers['x-forwarded-prefix'] = prefix;
    const reply = await deps.transport.request(gatewayId, {
      method: req.method ?? 'GET',
      path: query === undefined ? forwardedPath : `${forwardedPath}?${query}`,
      headers,
      body,
      signal: controller.signal,
    });
    res.writeHead(
      reply.status,
      flattenHeaders(reply.headers, () => false),
    );
    // Headers go out at once: a stream's first event must not wait for the first body chunk.
    res.flushHeaders();
    for await (const chunk of reply.body) {
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.once('drain', done);
          res.once('close', done);
        });
      }
      if (controller.signal.aborted) break;
    }
    res.end();
  } catch (error) {
    // Once the head is out, an error can only cut the response (sendError destroys it).
    sendError(res, asRelayError(error, gatewayId), style);
  } finally {
    res.off('close', onClose);
    deps.registry.release(gatewayId);
  }
}

function splitQuery(url: string): [string, string | undefined] {
  const at = url.indexOf('?');
  return at < 0 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1)];
}

async function readBody(req: IncomingMessage, limitBytes: number): Promise<Uint8Array> {
  const tooLarge = () =>
    new SvcError('body_too_large', {
      message: `The request body is larger than this tunnel relay accepts (${limitBytes} bytes).`,
      headers: { connection: 'close' },
    });
  if (Number(req.headers['content-length'] ?? 0) > limitBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function asRelayError(error: unknown, gatewayId: PeerId): SvcError {
  if (isSvcError(error)) return error;
  if (error instanceof TransportError) {
    if (error.failure === 'unreachable') {
      return new SvcError('gateway_offline', {
        message: `Gateway ${gatewayId} cannot be reached through this tunnel relay.`,
        cause: error,
      });
    }
    if (error.failure === 'timeout') return new SvcError('gateway_timeout', { cause: error });
    return new SvcError('gateway_failed', { cause: error });
  }
  return toSvcError(error);
}
