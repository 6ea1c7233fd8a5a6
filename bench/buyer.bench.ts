/**
 * Buyer benchmarks (issue 4 "Speed and memory"): route selection, catalog build, added latency
 * and throughput of the proxy vs calling the fake upstream directly, RSS with 1,000 cached peers.
 * Latency and throughput use the real path: buyer -> libp2p stream -> seller node -> fake upstream.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runBuyerNode, startBuyer } from '../src/buyer/index.js';
import { MemoryNetwork } from '../src/buyer/testing/memoryNetwork.js';
import { buildCatalog, OfferIndex, staticReputation } from '../src/catalog/index.js';
import { type PeerSpec, peerIdFor, peerRecord } from '../src/catalog/testing/peerRecord.js';
import { defaultConfig } from '../src/config/index.js';
import { silentLogger } from '../src/log/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from '../src/network/testing/loopback.js';
import { ownPreferences, passThroughProtocol, selectRoute } from '../src/routing/index.js';
import { startSeller } from '../src/seller/index.js';
import { measure, printComparison, printFigure, stats, throughput } from './lib.js';

const PROSE =
  'The buyer proxy routes each request to the cheapest eligible seller, fails over when a seller breaks, and reports who served it. ';
const MODELS = Array.from({ length: 500 }, (_, i) => `model-${i}`);

function peerSpecs(peers: number, servicesPerPeer: number, modelPool: string[]): PeerSpec[] {
  return Array.from({ length: peers }, (_, p) => ({
    peerId: p.toString(16).padStart(40, '0'),
    services: Array.from({ length: servicesPerPeer }, (_, s) => ({
      id: modelPool[(p * 7 + s) % modelPool.length]!,
      pricing: {
        inputUsdPerMillion: 1 + ((p * 13 + s) % 50) / 10,
        outputUsdPerMillion: 2 + (p % 7),
      },
    })),
  }));
}

async function routeSelection(): Promise<Record<string, unknown>> {
  const scores: Record<string, number> = {};
  const results: Record<string, unknown> = {};
  for (const [label, peers, perPeer, pool] of [
    ['10,000 offers over 500 models', 500, 20, MODELS],
    ['10,000 offers of one model', 10_000, 1, ['model-0']],
  ] as const) {
    const records = peerSpecs(peers, perPeer, [...pool]).map(peerRecord);
    for (const record of records)
      scores[record.metadata.peerId] =
        60 + (Number.parseInt(record.metadata.peerId.slice(-2), 16) % 40);
    const index = OfferIndex.fromPeers(records);
    const reputation = staticReputation(scores);
    const preferences = ownPreferences(defaultConfig().buyer.routingPreferences);
    const ours = await measure(
      () =>
        selectRoute({
          target: { kind: 'automatic', model: 'model-0' },
          routeType: 'text',
          clientProtocol: 'openai-chat-completions',
          chooseProtocol: passThroughProtocol,
          index,
          preferences,
          reputation,
        }),
      { iterations: 2000, warmup: 200 },
    );
    // Baseline: the naive approach — filter every offer of the network and sort them all.
    const all = [...index.byModel.values()].flatMap((model) => model.offers);
    const baseline = await measure(
      () =>
        all
          .filter(
            (offer) => offer.modelKey === 'model-0' && (reputation.score(offer.peerId) ?? 0) >= 60,
          )
          .sort((a, b) => a.rankPrice - b.rankPrice),
      { iterations: 200, warmup: 20 },
    );
    printComparison(
      `route selection, ${label} (p50)`,
      ours.p50Ms * 1000,
      baseline.p50Ms * 1000,
      'µs',
    );
    printFigure(`route selection, ${label} (p99)`, ours.p99Ms * 1000, 'µs', '≤ 100 µs');
    results[label] = { ours, naiveFilterSort: baseline };
  }
  return results;
}

async function catalogBuild(): Promise<Record<string, unknown>> {
  const specs = peerSpecs(1000, 20, MODELS);
  const reputation = staticReputation({});
  // Cold: every build sees records it has never seen (fresh objects, as after a restart).
  const rounds = Array.from({ length: 35 }, () => specs.map(peerRecord));
  let round = 0;
  const cold = await measure(
    () => buildCatalog(OfferIndex.fromPeers(rounds[round++]!), { reputation }),
    { iterations: 30, warmup: 5 },
  );
  // Warm: the usual rebuild after a directory refresh, where most signed records are unchanged.
  const records = rounds[0]!;
  const warm = await measure(() => buildCatalog(OfferIndex.fromPeers(records), { reputation }), {
    iterations: 30,
    warmup: 5,
  });
  // Baseline: only walking the same 20,000 announcements (the floor any build pays).
  const baseline = await measure(
    () => {
      let count = 0;
      for (const record of records)
        for (const provider of record.metadata.providers) count += provider.services.length;
      return count;
    },
    { iterations: 30, warmup: 5 },
  );
  printComparison(
    'catalog build cold, 1,000 peers x 20 services (p50)',
    cold.p50Ms,
    baseline.p50Ms,
    'ms',
  );
  printFigure('catalog build cold p99', cold.p99Ms, 'ms', '≤ 50 ms');
  printComparison('catalog build warm (records unchanged) (p50)', warm.p50Ms, baseline.p50Ms, 'ms');
  return { cold, warm, walkOnly: baseline };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function proxyLatency(): Promise<Record<string, unknown>> {
  const reply = JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 250, completion_tokens: 1, total_tokens: 251 },
  });
  const sse = [
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}]}\n\n',
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":250,"completion_tokens":1,"total_tokens":251}}\n\n',
    'data: [DONE]\n\n',
  ];
  const upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
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
  });
  const upstreamUrl = await listen(upstream);
  // The real path: buyer -> libp2p stream -> seller node (src/seller) -> upstream HTTP.
  const bootstrap = await startLoopbackNode('bootstrap');
  const seller = await startSeller({
    identity: randomIdentity(),
    network: loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] }),
    seller: {
      displayName: 'bench seller',
      uploadLimitBytes: 1024 * 1024,
      providers: [
        {
          type: 'openai-chat',
          baseUrl: `${upstreamUrl}/v1`,
          services: { 'gpt-4o': { categories: [] } },
          defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
          maxConcurrency: 64,
        },
      ],
    },
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-buyer-'));
  const config = defaultConfig();
  const buyer = await runBuyerNode({
    config: {
      ...config,
      network: loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] }),
      buyer: {
        ...config.buyer,
        routingPreferences: { ...config.buyer.routingPreferences, minTrustScore: 0 },
      },
    },
    dataDir,
    identity: randomIdentity(),
    logger: silentLogger(),
    port: 0,
  });
  await waitFor(
    async () => {
      await buyer.directory.refresh();
      return buyer.directory.list().some((peer) => peer.reachable);
    },
    60_000,
    'the seller',
  );
  const body = JSON.stringify({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: PROSE.repeat(8).slice(0, 1000) }],
  });
  const streamBody = JSON.stringify({ ...JSON.parse(body), stream: true });
  const call = (base: string) => async () => {
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`status ${response.status}`);
  };
  const firstByte = (base: string) => async () => {
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: streamBody,
    });
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
  };
  try {
    const direct = await measure(call(upstreamUrl), { iterations: 1000, warmup: 200 });
    const viaBuyer = await measure(call(buyer.url), { iterations: 1000, warmup: 200 });
    printComparison(
      '1 KB request latency p50 (buyer+libp2p+seller vs direct)',
      viaBuyer.p50Ms,
      direct.p50Ms,
      'ms',
    );
    printComparison(
      '1 KB request latency p99 (buyer+libp2p+seller vs direct)',
      viaBuyer.p99Ms,
      direct.p99Ms,
      'ms',
    );
    printFigure('added latency p50', viaBuyer.p50Ms - direct.p50Ms, 'ms', '≤ 2 ms');
    printFigure('added latency p99', viaBuyer.p99Ms - direct.p99Ms, 'ms', '≤ 5 ms');
    const ttfbDirect = await measure(firstByte(upstreamUrl), { iterations: 300, warmup: 50 });
    const ttfbBuyer = await measure(firstByte(buyer.url), { iterations: 300, warmup: 50 });
    printComparison('stream time to first byte p50', ttfbBuyer.p50Ms, ttfbDirect.p50Ms, 'ms');
    printFigure('added time to first byte p50', ttfbBuyer.p50Ms - ttfbDirect.p50Ms, 'ms', '≤ 2 ms');
    const directRate = await throughput(call(upstreamUrl), { concurrency: 32, durationMs: 3000 });
    const buyerRate = await throughput(call(buyer.url), { concurrency: 32, durationMs: 3000 });
    printComparison(
      'requests/s (buyer vs direct)',
      buyerRate.opsPerSecond,
      directRate.opsPerSecond,
      'req/s',
    );
    printFigure('buyer requests/s', buyerRate.opsPerSecond, 'req/s', '≥ 1,500');
    // The buyer's own share: the same requests over the in-memory network (seller = upstream fetch).
    const network = new MemoryNetwork();
    network.addSeller(
      {
        peerId: 'memory',
        services: [{ id: 'gpt-4o', pricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 } }],
      },
      async (sellerCall) => {
        const response = await fetch(`${upstreamUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: sellerCall.request.body,
        });
        return {
          status: response.status,
          headers: { 'content-type': 'application/json' },
          body: await response.text(),
        };
      },
    );
    const memoryBuyer = await startBuyer({
      config: {
        ...config.buyer,
        routingPreferences: { ...config.buyer.routingPreferences, minTrustScore: 0 },
      },
      dataDir,
      directory: network.directory,
      transport: network.transport,
      logger: silentLogger(),
      port: 0,
    });
    try {
      const viaMemory = await measure(call(memoryBuyer.url), { iterations: 1000, warmup: 200 });
      printComparison(
        '1 KB latency p50, buyer over in-memory network vs direct',
        viaMemory.p50Ms,
        direct.p50Ms,
        'ms',
      );
      network.calls.length = 0;
      const memoryRate = await throughput(call(memoryBuyer.url), {
        concurrency: 32,
        durationMs: 3000,
      });
      printComparison(
        'requests/s, buyer over in-memory network vs direct',
        memoryRate.opsPerSecond,
        directRate.opsPerSecond,
        'req/s',
      );
      return {
        direct,
        viaBuyer,
        ttfbDirect,
        ttfbBuyer,
        directRate,
        buyerRate,
        viaMemory,
        memoryRate,
      };
    } finally {
      await memoryBuyer.stop();
    }
  } finally {
    await buyer.stop();
    await seller.stop();
    await bootstrap.stop();
    await new Promise((resolve) => upstream.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function memoryWithPeers(): Promise<Record<string, unknown>> {
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  const network = new MemoryNetwork();
  for (const spec of peerSpecs(1000, 20, MODELS)) network.addSeller(spec, () => ({ status: 500 }));
  const index = OfferIndex.fromPeers(network.directory.list());
  const catalog = buildCatalog(index, { reputation: staticReputation({}) });
  const after = process.memoryUsage().rss;
  printFigure('RSS with 1,000 cached peers (whole process)', after / 2 ** 20, 'MiB', '≤ 200 MB');
  printFigure('RSS growth for 1,000 peers + index + catalog', (after - before) / 2 ** 20, 'MiB');
  return {
    rssBytes: after,
    growthBytes: after - before,
    entries: catalog.length,
    peerId: peerIdFor('x'),
  };
}

export default async function bench(): Promise<Record<string, unknown>> {
  const started = performance.now();
  const results = {
    // Memory first, before other benchmarks allocate.
    memory: await memoryWithPeers(),
    routeSelection: await routeSelection(),
    catalogBuild: await catalogBuild(),
    proxy: await proxyLatency(),
  };
  return {
    ...results,
    totalSeconds: (performance.now() - started) / 1000,
    statsCheck: stats([1]).samples,
  };
}
