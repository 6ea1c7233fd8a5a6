import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeSnapshot } from './encodedSnapshot.js';
import { type IndexerHttpServer, pickEncoding, startIndexerHttp } from './httpServer.js';
import { IndexerMetrics } from './IndexerMetrics.js';
import { createRateLimiter } from './rateLimit.js';

const BODY = JSON.stringify({ peers: [{ peerId: 'a'.repeat(40) }], updatedAt: 1 });
let server: IndexerHttpServer | undefined;

async function start(rateLimitPerSecond = 0, ready = true) {
  const snapshot = await encodeSnapshot(BODY, 1_700_000_000_000);
  server = await startIndexerHttp({
    host: '127.0.0.1',
    port: 0,
    current: () => (ready ? snapshot : undefined),
    health: () => ({ ok: ready }),
    metrics: new IndexerMetrics(),
    limiter: createRateLimiter(rateLimitPerSecond),
    maxAgeSeconds: 120,
  });
  return { url: server.url, snapshot };
}

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('indexer HTTP face', () => {
  it('serves /stats with ETag, public caching and open CORS, and 304 on a matching If-None-Match', async () => {
    const { url, snapshot } = await start();
    const full = await fetch(`${url}/stats`, { headers: { 'accept-encoding': 'identity' } });
    expect(full.status).toBe(200);
    expect(full.headers.get('etag')).toBe(snapshot.etag);
    expect(full.headers.get('cache-control')).toBe('public, max-age=120');
    expect(full.headers.get('access-control-allow-origin')).toBe('*');
    expect(full.headers.get('vary')).toBe('accept-encoding');
    expect(await full.text()).toBe(BODY);
    const hit = await fetch(`${url}/stats`, { headers: { 'if-none-match': snapshot.etag } });
    expect(hit.status).toBe(304);
    expect(await hit.text()).toBe('');
    const miss = await fetch(`${url}/stats`, { headers: { 'if-none-match': '"other"' } });
    expect(miss.status).toBe(200);
  });

  it('compresses with brotli or gzip as the client asks', async () => {
    const { url } = await start();
    const { request } = await import('undici');
    const br = await request(`${url}/stats`, { headers: { 'accept-encoding': 'gzip, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(Buffer.from(await br.body.arrayBuffer())).toString()).toBe(BODY);
    const gz = await request(`${url}/stats`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(Buffer.from(await gz.body.arrayBuffer())).toString()).toBe(BODY);
    expect(pickEncoding('br;q=0, gzip')).toBe('gzip');
    expect(pickEncoding('identity')).toBeUndefined();
  });

  it('answers CORS preflights, refuses other methods and unknown paths', async () => {
    const { url } = await start();
    const preflight = await fetch(`${url}/stats`, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
    expect((await fetch(`${url}/stats`, { method: 'POST', body: 'x' })).status).toBe(405);
    expect((await fetch(`${url}/nope`)).status).toBe(404);
  });

  it('limits requests per client address with 429 and Retry-After', async () => {
    const { url } = await start(2);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await fetch(`${url}/healthz`)).status);
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses).toContain(429);
    const limited = await fetch(`${url}/stats`);
    if (limited.status === 429) expect(limited.headers.get('retry-after')).toBe('1');
  });

  it('says 503 until the first snapshot exists; /metrics is Prometheus text', async () => {
    const { url } = await start(0, false);
    const early = await fetch(`${url}/stats`);
    expect(early.status).toBe(503);
    expect(((await early.json()) as { error: { code: string } }).error.code).toBe(
      'snapshot_not_ready',
    );
    expect((await fetch(`${url}/healthz`)).status).toBe(503);
    const metrics = await fetch(`${url}/metrics`);
    expect(await metrics.text()).toContain(
      'svc_indexer_requests_total{route="/stats",status="503"} 1',
    );
  });
});
