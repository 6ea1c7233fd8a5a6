/**
 * The buyer's request path, measured against calling the fake upstream directly in the same run
 * (goals: added p50 ≤ 2 ms, p99 ≤ 5 ms for 1 KB; added time to first byte ≤ 2 ms;
 * ≥ 1,500 req/s on 2 cores). The load generator is an undici Pool with keep-alive for both.
 *
 * - `separateProcesses`: as deployed. The fake upstream, `svc seller start` and `svc buyer start`
 *   are each their own process; this process only generates load. CPU per request of every
 *   process is read from /proc.
 * - `oneProcess`: upstream, seller node, buyer and load generator in this one process (one
 *   core), plus the buyer over the in-memory network (the buyer's own share).
 *
 * The seller and buyer processes, and the node flags a run adds to them, are bench/svcProcesses.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { runBuyerNode, startBuyer } from '../src/buyer/index.js';
import { MemoryNetwork } from '../src/buyer/testing/memoryNetwork.js';
import { defaultConfig } from '../src/config/index.js';
import { silentLogger } from '../src/log/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from '../src/network/testing/loopback.js';
import { startSeller } from '../src/seller/index.js';
import {
  cpuMsOf,
  measure,
  printComparison,
  printFigure,
  type Stats,
  startChild,
  stats,
  throughput,
} from './lib.js';
import { benchSeller, startSellerAndBuyer } from './svcProcesses.js';

const PROSE =
  'The buyer proxy routes each request to the cheapest eligible seller, fails over when a seller breaks, and reports who served it. ';
const BODY = JSON.stringify({
  model: 'gpt-4o',
  messages: [{ role: 'user', content: PROSE.repeat(8).slice(0, 1000) }],
});
const STREAM_BODY = JSON.stringify({ ...JSON.parse(BODY), stream: true });
const CONCURRENCY = 32;
const RATE_MS = 3000;

/** The fake OpenAI upstream (plain node:http, no TypeScript: it also runs as `node -e`). */
const UPSTREAM_SOURCE = `
const { createServer } = require('node:http');
const reply = JSON.stringify({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 250, completion_tokens: 1, total_tokens: 251 },
});
const sse = [
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}]}\\n\\n',
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":250,"completion_tokens":1,"total_tokens":251}}\\n\\n',
  'data: [DONE]\\n\\n',
];
function handler(req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    if (Buffer.concat(chunks).includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse[0]);
      res.end(sse.slice(1).join(''));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(reply);
  });
}
`;

function upstreamHandler(): Parameters<typeof createServer>[1] {
  const module = { exports: {} as { handler?: Parameters<typeof createServer>[1] } };
  // The same source as the upstream process, evaluated here for the one-process variant.
  new Function('require', 'module', `${UPSTREAM_SOURCE}\nmodule.exports.handler = handler;`)(
    (name: string) => (name === 'node:http' ? { createServer } : undefined),
    module,
  );
  return module.exports.handler!;
}

const call = (pool: Pool) => async () => {
  const response = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body: BODY,
  });
  await response.body.dump();
  if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
};

/** Time to the first body chunk of a stream; the rest is read (untimed) so connections stay up. */
async function firstByte(pool: Pool, samples: number[]): Promise<void> {
  const start = performance.now();
  const response = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body: STREAM_BODY,
  });
  let first = true;
  for await (const _chunk of response.body) {
    if (first) {
      samples.push(performance.now() - start);
      first = false;
    }
  }
  if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
}

async function ttfb(pool: Pool): Promise<Stats> {
  const warm: number[] = [];
  for (let i = 0; i < 50; i++) await firstByte(pool, warm);
  const samples: number[] = [];
  for (let i = 0; i < 300; i++) await firstByte(pool, samples);
  return stats(samples);
}

interface PathFigures {
  direct: Stats;
  viaBuyer: Stats;
  ttfbDirect: Stats;
  ttfbBuyer: Stats;
  directRate: Awaited<ReturnType<typeof throughput>>;
  buyerRate: Awaited<ReturnType<typeof throughput>>;
  cpuMsPerRequest?: Record<string, number | null>;
}

/** Latency, time to first byte and requests/s, direct vs through the buyer, interleaved. */
async function comparePaths(
  label: string,
  upstreamUrl: string,
  buyerUrl: string,
  pids: Record<string, number> = {},
): Promise<PathFigures> {
  const direct = new Pool(upstreamUrl, { connections: 64 });
  const viaBuyer = new Pool(buyerUrl, { connections: 64 });
  try {
    const directStats = await measure(call(direct), { iterations: 2000, warmup: 300 });
    const buyerStats = await measure(call(viaBuyer), { iterations: 2000, warmup: 300 });
    printComparison(`${label}: 1 KB latency p50`, buyerStats.p50Ms, directStats.p50Ms, 'ms');
    printComparison(`${label}: 1 KB latency p99`, buyerStats.p99Ms, directStats.p99Ms, 'ms');
    printFigure(`${label}: added p50`, buyerStats.p50Ms - directStats.p50Ms, 'ms', '≤ 2 ms');
    printFigure(`${label}: added p99`, buyerStats.p99Ms - directStats.p99Ms, 'ms', '≤ 5 ms');
    const ttfbDirect = await ttfb(direct);
    const ttfbBuyer = await ttfb(viaBuyer);
    printComparison(`${label}: stream first byte p50`, ttfbBuyer.p50Ms, ttfbDirect.p50Ms, 'ms');
    printFigure(
      `${label}: added first byte p50`,
      ttfbBuyer.p50Ms - ttfbDirect.p50Ms,
      'ms',
      '≤ 2 ms',
    );
    const directRate = await throughput(call(direct), {
      concurrency: CONCURRENCY,
      durationMs: RATE_MS,
    });
    const cpuBefore = Object.fromEntries(
      Object.entries(pids).map(([name, pid]) => [name, cpuMsOf(pid)]),
    );
    const ownBefore = process.cpuUsage();
    const buyerRate = await throughput(call(viaBuyer), {
      concurrency: CONCURRENCY,
      durationMs: RATE_MS,
    });
    const own = process.cpuUsage(ownBefore);
    printComparison(
      `${label}: requests/s (buyer vs direct)`,
      buyerRate.opsPerSecond,
      directRate.opsPerSecond,
      'req/s',
    );
    printFigure(`${label}: buyer requests/s`, buyerRate.opsPerSecond, 'req/s', '≥ 1,500');
    const figures: PathFigures = {
      direct: directStats,
      viaBuyer: buyerStats,
      ttfbDirect,
      ttfbBuyer,
      directRate,
      buyerRate,
    };
    if (Object.keys(pids).length > 0) {
      const perRequest: Record<string, number | null> = {
        'load generator': (own.user + own.system) / 1000 / buyerRate.operations,
      };
      for (const [name, pid] of Object.entries(pids)) {
        const before = cpuBefore[name];
        const after = cpuMsOf(pid);
        perRequest[name] =
          before === null || before === undefined || after === null
            ? null
            : (after - before) / buyerRate.operations;
      }
      for (const [name, ms] of Object.entries(perRequest)) {
        if (ms === null) continue;
        printFigure(`${label}: ${name} CPU per request`, ms * 1000, 'µs');
      }
      const buyerMs = perRequest.buyer;
      if (buyerMs)
        printFigure(`${label}: = req/s one buyer core allows`, 1000 / buyerMs, 'req/s', '≥ 1,500');
      figures.cpuMsPerRequest = perRequest;
    }
    return figures;
  } finally {
    await direct.close();
    await viaBuyer.close();
  }
}

/** Fake upstream, seller and buyer each in their own process (as deployed). */
export async function separateProcesses(): Promise<PathFigures> {
  const root = mkdtempSync(join(tmpdir(), 'svc-bench-path-'));
  const stops: Array<() => Promise<void>> = [];
  try {
    const upstream = await startChild(
      [
        '-e',
        `${UPSTREAM_SOURCE}\nconst s = createServer({ keepAliveTimeout: 60000 }, handler);\ns.listen(0, '127.0.0.1', () => console.log('upstream port ' + s.address().port));\nprocess.on('SIGTERM', () => process.exit(0));`,
      ],
      (output) => /upstream port (\d+)/.exec(output)?.[1],
    );
    stops.push(() => upstream.stop());
    const upstreamUrl = `http://127.0.0.1:${upstream.ready}`;
    const { sellerPid, buyerPid, buyerUrl } = await startSellerAndBuyer(root, upstreamUrl, stops);
    const buyer = { ready: { url: buyerUrl }, pid: buyerPid };
    const seller = { pid: sellerPid };
    const probe = new Pool(buyer.ready.url);
    await waitFor(
      async () => {
        const response = await probe.request({
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { 'content-type': 'application/json' },
          body: BODY,
        });
        await response.body.dump();
        return response.statusCode === 200;
      },
      60_000,
      'the buyer to reach the seller',
    );
    await probe.close();
    // Other work on the machine shows in every figure (the p99 above all): print the load.
    const loadBefore = loadavg()[0]!;
    const figures = await comparePaths('separate processes', upstreamUrl, buyer.ready.url, {
      buyer: buyer.pid,
      seller: seller.pid,
      upstream: upstream.pid,
    });
    console.log(
      `machine load average (1 min) before ${loadBefore.toFixed(2)}, after ${loadavg()[0]!.toFixed(2)}`,
    );
    return figures;
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  }
}

/** Everything in this one process (one core), plus the buyer over the in-memory network. */
export async function oneProcess(): Promise<Record<string, unknown>> {
  const upstream = createServer({ keepAliveTimeout: 60_000 }, upstreamHandler());
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const bootstrap = await startLoopbackNode('bootstrap');
  const seller = await startSeller({
    identity: randomIdentity(),
    network: loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] }),
    seller: benchSeller(upstreamUrl),
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-buyer-'));
  const config = defaultConfig();
  const buyerConfig = {
    ...config.buyer,
    routingPreferences: { ...config.buyer.routingPreferences, minTrustScore: 0 },
  };
  const buyer = await runBuyerNode({
    config: {
      ...config,
      network: loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] }),
      buyer: buyerConfig,
    },
    dataDir,
    identity: randomIdentity(),
    logger: silentLogger(),
    port: 0,
  });
  // The buyer's own share: the same requests over the in-memory network (seller = upstream call).
  const network = new MemoryNetwork();
  const upstreamPool = new Pool(upstreamUrl, { connections: 64 });
  network.addSeller(
    {
      peerId: 'memory',
      services: [{ id: 'gpt-4o', pricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 } }],
    },
    async (sellerCall) => {
      const response = await upstreamPool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: sellerCall.request.body,
      });
      return {
        status: response.statusCode,
        headers: { 'content-type': 'application/json' },
        body: await response.body.text(),
      };
    },
  );
  const memoryBuyer = await startBuyer({
    config: buyerConfig,
    dataDir,
    directory: network.directory,
    transport: network.transport,
    logger: silentLogger(),
    port: 0,
  });
  try {
    await waitFor(
      async () => {
        await buyer.directory.refresh();
        return buyer.directory.list().some((peer) => peer.reachable);
      },
      60_000,
      'the seller',
    );
    const libp2p = await comparePaths('one process', upstreamUrl, buyer.url);
    const memory = new Pool(memoryBuyer.url, { connections: 64 });
    const direct = new Pool(upstreamUrl, { connections: 64 });
    try {
      const viaMemory = await measure(call(memory), { iterations: 2000, warmup: 300 });
      const directAgain = await measure(call(direct), { iterations: 2000, warmup: 300 });
      printComparison(
        'one process, in-memory network: latency p50',
        viaMemory.p50Ms,
        directAgain.p50Ms,
        'ms',
      );
      network.calls.length = 0;
      const memoryRate = await throughput(call(memory), {
        concurrency: CONCURRENCY,
        durationMs: RATE_MS,
      });
      network.calls.length = 0;
      printComparison(
        'one process, in-memory network: requests/s',
        memoryRate.opsPerSecond,
        libp2p.directRate.opsPerSecond,
        'req/s',
      );
      return { libp2p, memory: { latency: viaMemory, directAgain, rate: memoryRate } };
    } finally {
      await memory.close();
      await direct.close();
    }
  } finally {
    await memoryBuyer.stop();
    await upstreamPool.close();
    await buyer.stop();
    await seller.stop();
    await bootstrap.stop();
    await new Promise((resolve) => upstream.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
