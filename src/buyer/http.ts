/** Small HTTP helpers of the buyer: loopback guard, bounded body reading, JSON and error replies. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ErrorStyle, renderError, SvcError } from '../errors/index.js';
import { parseJsonBody } from '../formats/index.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** True for loopback host names (with or without port). */
export function isLoopbackHost(hostHeader: string): boolean {
  let host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) host = host.slice(0, host.indexOf(']') + 1);
  else if (host.includes(':') && host.split(':').length === 2) host = host.split(':')[0]!;
  return LOOPBACK_HOSTS.has(host) || host.endsWith('.localhost');
}

/** DNS-rebinding guard: Host (and Origin when sent) must be loopback, else 403. */
export function assertLoopbackRequest(req: IncomingMessage): void {
  const host = req.headers.host;
  if (!host || !isLoopbackHost(host)) {
    throw new SvcError('forbidden_host', { details: { host: host ?? null } });
  }
  const origin = req.headers.origin;
  if (origin && origin !== 'null') {
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      throw new SvcError('forbidden_host', { details: { origin } });
    }
    if (!isLoopbackHost(originHost)) throw new SvcError('forbidden_host', { details: { origin } });
  }
}

/** Reads the body, refusing with 413 as soon as it exceeds `limitBytes` (by header or by count). */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  const tooLarge = () =>
    new SvcError('body_too_large', {
      message: `The request body is larger than ${limitBytes} bytes (buyer.bodyLimitBytes).`,
      details: { limitBytes },
      headers: { connection: 'close' },
    });
  if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Parses a JSON object body; 415 for other content types, 400 with the parse position. */
export function parseJsonObject(req: IncomingMessage, raw: Buffer): Record<string, unknown> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    throw new SvcError('unsupported_media_type', {
      message: `Send the body as application/json (got ${type ? `"${type}"` : 'no content type'}).`,
    });
  }
  const value = parseJsonBody(raw);
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new SvcError('invalid_request', { message: 'The request body must be a JSON object.' });
  }
  return value as Record<string, unknown>;
}

/** Sends a JSON body. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Sends an SvcError in the client's style (once; after headers were sent it only ends). */
export function sendError(
  res: ServerResponse,
  error: SvcError,
  style: ErrorStyle,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, error.status, renderError(error, style), { ...headers, ...(error.headers ?? {}) });
}

/** Headers never sent to sellers: credentials, cookies, svc control headers, hop-by-hop. */
const DROPPED = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'cookie',
  'set-cookie',
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'origin',
  'referer',
  'expect',
]);

/** The client headers a seller may see. */
export function headersForSeller(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    const lower = name.toLowerCase();
    if (DROPPED.has(lower) || lower.startsWith('x-svc-') || value === undefined) continue;
    out[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  out['content-type'] = 'application/json';
  return out;
}
