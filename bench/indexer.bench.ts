/**
 * Indexer benchmarks: a 10,000-seller snapshot (each with on-chain history)
 *  1. built: records + chain stats -> snapshot object -> JSON -> gzip + brotli + ETag (goal <= 1 s);
 *  2. served by `GET /stats` over loopback HTTP, ETag hits (304) and full brotli bodies reported
 *     separately (goal >= 2,000 req/s each). The server runs in a child process (this file again,
 *     with SVC_BENCH_INDEXER_SERVE set), so load generation and serving do not share one thread.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { Address, Hex } from 'viem';
import { startIndexerHttp } from '../src/indexer/httpServer.js';
import { IndexerMetrics } from '../src/indexer/IndexerMetrics.js';
import {
  buildSnapshot,
  type ChainEvent,
  type CrawledRecord,
  encodeSnapshot,
  foldChainEvents,
  type IndexedSellerStats,
} from '../src/indexer/index.js';
import { createRateLimiter } from '../src/indexer/rateLimit.js';
import type { PeerMetadata } from '../src/network/index.js';
import { cpuMsOf, printFigure, startChild, throughput } from './lib.js';
import { rawHttpLoadThreads } from './rawHttpLoad.js';

const PEERS = 10_000;

function hex(bytes: number, seed: number): string {
  let out = '';
  let state = seed * 2654435761;
  while (out.length < bytes * 2) {
    state = (state * 1103515245 + 12345) >>> 0;
    out += state.toString(16).padStart(8, '0');
  }
  return out.slice(0, bytes * 2);
}

function record(index: number): CrawledRecord {
  const peerId = hex(20, index + 1);
  const metadata: PeerMetadata = {
    peerId,
    version: 1,
    displayName: `seller ${index}`,
    providers: [
      {
        provider: 'openai',
        services: [`model-${index % 50}`, `model-${(index + 7) % 50}-mini`],
        defaultPricing: {
          inputUsdPerMillion: 1 + (index % 5),
          outputUsdPerMillion: 4 + (index % 9),
        },
        serviceCategories: { [`model-${index % 50}`]: ['chat'] },
        maxConcurrency: 8,
        currentLoad: index % 8,
      },
    ],
    capabilities: {
      uploadLimitBytes: 1_048_576,
      payments: { chainId: 31337, paymentsContract: `0x${hex(20, 999_999)}` },
    },
    region: 'eu-west',
    timestamp: 1_764_000_000_000 + index,
    signature: `0x${hex(65, index + 100_000)}` as Hex,
  };
  return {
    metadata,
    libp2pPeerId: `16Uiu2HAm${hex(22, index + 200_000)}`,
    addresses: [`/ip4/10.0.${(index >> 8) & 255}.${index & 255}/tcp/4001`],
  };
}

function events(records: readonly CrawledRecord[]): ChainEvent[] {
  const out: ChainEvent[] = [];
  let block = 1n;
  for (const [index, { metadata }] of records.entries()) {
    const seller = `0x${metadata.peerId}` as Address;
    const base = { seller, channelId: `0x${hex(32, index)}` as Hex, reclaimed: false };
    for (let buyer = 0; buyer < 3; buyer++) {
      const shared = {
        ...base,
        buyer: `0x${hex(20, buyer + 7)}` as Address,
        blockTime: 1_760_000_000 + index,
      };
      out.push({ ...shared, blockNumber: block, logIndex: 0, kind: 'opened', amountMicro: 0n });
      out.push({
        ...shared,
        blockNumber: block,
        logIndex: 1,
        kind: 'settled',
        amountMicro: 12_345n,
      });
      block += 1n;
    }
  }
  return out;
}

function inputs() {
  const records = Array.from({ length: PEERS }, (_, index) => record(index));
  const stats = new Map<Address, IndexedSellerStats>();
  foldChainEvents(stats, events(records));
  const chain = {
    stats,
    lastBlock: 30_000n,
    chainTimeSeconds: 1_764_000_000,
    refreshedAt: Date.now(),
    error: null,
  };
  const indexer = {
    id: 'bench',
    version: 'bench',
    chainId: 31337,
    paymentsContract: `0x${hex(20, 999_999)}` as Address,
    refreshSeconds: 120,
  };

  return { records, chain, indexer };
}

/** Child mode: build once, serve, print the URL, run until SIGTERM. */
async function serveOnly(): Promise<void> {
  const { records, chain, indexer } = inputs();
  const body = JSON.stringify(buildSnapshot({ records, chain, indexer, now: Date.now() }));
  const encoded = await encodeSnapshot(body, Date.now());
  const server = await startIndexerHttp({
    host: '127.0.0.1',
    port: 0,
    current: () => encoded,
    health: () => ({ ok: true }),
    metrics: new IndexerMetrics(),
    limiter: createRateLimiter(0),
    maxAgeSeconds: 120,
  });
  console.log(`serving ${server.url} etag ${encoded.etag}`);
  process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
}

if (process.env.SVC_BENCH_INDEXER_SERVE) await serveOnly();

export default async function run(): Promise<Record<string, unknown>> {
  const { records, chain, indexer } = inputs();
  const rebuild = async () => {
    const started = performance.now();
    const snapshot = buildSnapshot({ records, chain, indexer, now: Date.now() });
    const body = JSON.stringify(snapshot);
    const built = performance.now();
    const encoded = await encodeSnapshot(body, Date.now());
    const done = performance.now();
    return { encoded, buildMs: built - started, encodeMs: done - built, totalMs: done - started };
  };
  await rebuild(); // warm-up
  const builds: Awaited<ReturnType<typeof rebuild>>[] = [];
  for (let i = 0; i < 5; i++) builds.push(await rebuild());
  const best = (key: 'buildMs' | 'encodeMs' | 'totalMs') => Math.min(...builds.map((b) => b[key]));
  const median = (key: 'buildMs' | 'encodeMs' | 'totalMs') =>
    [...builds.map((b) => b[key])].sort((a, b) => a - b)[2]!;
  const { encoded } = builds.at(-1)!;
  printFigure('snapshot build: object + JSON (median)', median('buildMs'), 'ms');
  printFigure('snapshot encode: gzip + brotli + ETag (median)', median('encodeMs'), 'ms');
  printFigure('snapshot rebuild total (median)', median('totalMs'), 'ms', '<= 1000 ms');
  printFigure('JSON / gzip / brotli size', encoded.json.byteLength / 1e6, 'MB');
  printFigure('  gzip', encoded.gzip.byteLength / 1e6, 'MB');
  printFigure('  brotli', encoded.brotli.byteLength / 1e6, 'MB');

  const child = await startChild(
    ['--import', 'tsx', new URL('./indexer.bench.ts', import.meta.url).pathname],
    (output) => /serving (\S+) etag (\S+)/.exec(output)?.slice(1, 3),
    { env: { ...process.env, SVC_BENCH_INDEXER_SERVE: '1' } },
  );
  const [url, etag] = child.ready as [string, string];
  const pool = new Pool(url, { connections: 32 });
  try {
    const get = async (headers: Record<string, string>, expected: number) => {
      const reply = await pool.request({ path: '/stats', method: 'GET', headers });
      await reply.body.dump({ limit: Number.MAX_SAFE_INTEGER });
      if (reply.statusCode !== expected) throw new Error(`status ${reply.statusCode}`);
    };
    const etagHit = () => get({ 'if-none-match': etag }, 304);
    const fullBrotli = () => get({ 'accept-encoding': 'br' }, 200);
    const fullGzip = () => get({ 'accept-encoding': 'gzip' }, 200);
    // The server's own CPU per request says what one core can serve, whatever else the machine
    // (and the load generator) is doing meanwhile.
    const phase = async (label: string, headers: Record<string, string>, goal?: string) => {
      const cpuBefore = cpuMsOf(child.pid) ?? 0;
      const clientBefore = process.cpuUsage();
      const result = await rawHttpLoadThreads(url, '/stats', headers, {
        connections: 16,
        durationMs: 3000,
        threads: 2,
      });
      const cpuMs = (cpuMsOf(child.pid) ?? 0) - cpuBefore;
      const client = process.cpuUsage(clientBefore);
      const clientCpuShare = (client.user + client.system) / 1000 / 3000;
      const serverCpuMsPerRequest = cpuMs / Math.max(1, result.operations);
      const perServerCore = serverCpuMsPerRequest > 0 ? 1000 / serverCpuMsPerRequest : Number.NaN;
      printFigure(label, result.opsPerSecond, 'req/s', goal);
      printFigure(`  server CPU per request`, serverCpuMsPerRequest, 'ms');
      printFigure(`  => one server core serves`, perServerCore, 'req/s');
      printFigure(`  load generator CPU (share of one core)`, clientCpuShare, '');
      return {
        ...result,
        serverCpuMsPerRequest,
        requestsPerServerCoreSecond: perServerCore,
        loadGeneratorCpuShare: clientCpuShare,
      };
    };
    await throughput(etagHit, { concurrency: 32, durationMs: 500 });
    await throughput(fullBrotli, { concurrency: 8, durationMs: 300 });
    await throughput(fullGzip, { concurrency: 8, durationMs: 300 });
    const hits = await phase('GET /stats, ETag hit (304)', { 'if-none-match': etag }, '>= 2000');
    const brotli = await phase(
      'GET /stats, full body (brotli)',
      { 'accept-encoding': 'br' },
      '>= 2000',
    );
    const gzip = await phase('GET /stats, full body (gzip)', { 'accept-encoding': 'gzip' });
    return {
      peers: PEERS,
      build: {
        objectAndJsonMs: { median: median('buildMs'), best: best('buildMs') },
        compressAndEtagMs: { median: median('encodeMs'), best: best('encodeMs') },
        totalMs: { median: median('totalMs'), best: best('totalMs') },
        goalMs: 1000,
      },
      bytes: {
        json: encoded.json.byteLength,
        gzip: encoded.gzip.byteLength,
        brotli: encoded.brotli.byteLength,
      },
      serve: {
        etagHits: hits,
        fullBodyBrotli: brotli,
        fullBodyGzip: gzip,
        loadAverage: loadavg(),
        goalPerSecond: 2000,
        note: 'server in a child process, load from bench/rawHttpLoad.ts (16 keep-alive sockets over 2 worker threads); both share the machine',
      },
    };
  } finally {
    await pool.close();
    await child.stop();
  }
}
