/**
 * The indexer's public HTTP face on bare `node:http` (the hot path is one Map-free lookup and a
 * write): `GET /stats` from the pre-encoded snapshot with ETag / If-None-Match, gzip or brotli,
 * `Cache-Control: public`, open CORS and a per-address rate limit; `GET /healthz`; `GET /metrics`.
 * Requests carry no body; anything else is 404 or 405.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { boundIngress, localUrl } from '../http/index.js';
import type { EncodedSnapshot } from './encodedSnapshot.js';
import type { IndexerMetrics } from './IndexerMetrics.js';
import type { RateLimiter } from './rateLimit.js';

export interface IndexerHttpOptions {
  host: string;
  port: number;
  /** The snapshot being served (undefined until the first one exists). */
  current: () => EncodedSnapshot | undefined;
  /** Body of `/healthz` (status 200 when `ok`, else 503). */
  health: () => { ok: boolean } & Record<string, unknown>;
  metrics: IndexerMetrics;
  limiter: RateLimiter;
  /** `Cache-Control: public, max-age=<this>`. */
  maxAgeSeconds: number;
}

export interface IndexerHttpServer {
  server: Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'if-none-match, accept-encoding',
  'access-control-expose-headers': 'etag',
  'access-control-max-age': '86400',
};

function sendJson(res: ServerResponse, status: number, body: unknown, extra = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...CORS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...extra,
  });
  res.end(text);
}

/** True when an If-None-Match header names `etag` (weak comparison, lists and `*`). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** The best encoding the client accepts: `br`, then `gzip`, else none. */
export function pickEncoding(header: string | undefined): 'br' | 'gzip' | undefined {
  if (!header) return undefined;
  const accepted = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name!.trim(), q === undefined ? 1 : Number(q));
  }
  const weight = (name: string) => accepted.get(name) ?? accepted.get('*') ?? 0;
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return undefined;
}

function serveStats(
  req: IncomingMessage,
  res: ServerResponse,
  snapshot: EncodedSnapshot,
  maxAgeSeconds: number,
): number {
  const headers = {
    ...CORS,
    etag: snapshot.etag,
    'cache-control': `public, max-age=${maxAgeSeconds}`,
    'last-modified': new Date(snapshot.builtAt).toUTCString(),
    vary: 'accept-encoding',
  };
  if (etagMatches(req.headers['if-none-match'], snapshot.etag)) {
    res.writeHead(304, headers);
    res.end();
    return 304;
  }
  const encoding = pickEncoding(req.headers['accept-encoding']);
  const body =
    encoding === 'br' ? snapshot.brotli : encoding === 'gzip' ? snapshot.gzip : snapshot.json;
  res.writeHead(200, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': body.byteLength,
    ...(encoding ? { 'content-encoding': encoding } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return 200;
}

/** Starts listening; `port` 0 picks a free one. */
export async function startIndexerHttp(options: IndexerHttpOptions): Promise<IndexerHttpServer> {
  const server = createServer((req, res) => {
    handleRequest(options, req, res).catch(() => {
      if (!res.headersSent)
        sendJson(res, 500, { error: { code: 'internal_error', message: 'internal error' } });
      else res.destroy();
    });
  });
  boundIngress(server, {
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 15_000,
    keepAliveTimeoutMs: 5_000,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    url: localUrl(server, options.host),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Answers one request and counts it by route and status. */
async function handleRequest(
  options: IndexerHttpOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  const route = path === '/stats' || path === '/healthz' || path === '/metrics' ? path : 'other';
  const status =
    answerBeforeRouting(options.limiter, req, res) ?? (await answerRoute(options, req, res, path));
  options.metrics.requests.inc({ route, status: String(status) });
}

/** CORS preflight, a method other than GET/HEAD, or a rate-limited address: the status sent. */
function answerBeforeRouting(
  limiter: RateLimiter,
  req: IncomingMessage,
  res: ServerResponse,
): number | undefined {
  if (req.method === 'OPTIONS') {
    res.writeHead(204, CORS);
    res.end();
    return 204;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendJson(
      res,
      405,
      { error: { code: 'method_not_allowed', message: 'use GET' } },
      { allow: 'GET, HEAD, OPTIONS' },
    );
    return 405;
  }
  if (!limiter.allow(req.socket.remoteAddress ?? 'unknown')) {
    sendJson(
      res,
      429,
      { error: { code: 'rate_limited', message: 'too many requests: retry in a second' } },
      { 'retry-after': '1' },
    );
    return 429;
  }
  return undefined;
}

/** `/stats`, `/healthz`, `/metrics` or 404; returns the status sent. */
async function answerRoute(
  options: IndexerHttpOptions,
  req: IncomingMessage,
  res: ServerResponse,
  path: string | undefined,
): Promise<number> {
  if (path === '/stats') {
    const snapshot = options.current();
    if (!snapshot) {
      sendJson(
        res,
        503,
        {
          error: {
            code: 'snapshot_not_ready',
            message: 'the first snapshot is being built: retry shortly',
          },
        },
        { 'retry-after': '5' },
      );
      return 503;
    }
    return serveStats(req, res, snapshot, options.maxAgeSeconds);
  }
  if (path === '/healthz') {
    const health = options.health();
    sendJson(res, health.ok ? 200 : 503, health, { 'cache-control': 'no-store' });
    return health.ok ? 200 : 503;
  }
  if (path === '/metrics') {
    const text = await options.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': options.metrics.registry.contentType });
    res.end(text);
    return 200;
  }
  sendJson(res, 404, {
    error: { code: 'not_found', message: 'routes: GET /stats, /healthz, /metrics' },
  });
  return 404;
}
