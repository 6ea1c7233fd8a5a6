/**
 * `npm run bench -- compare`: svc's request path side by side with Portkey's open-source gateway
 * (npm `@portkey-ai/gateway`, started offline from node_modules), in one run, against one fake
 * upstream in its own process (bench/compareTraffic.ts: a different 0.5–4 KB prompt and ~1 KB
 * answer with `usage` per request; streams of 200 chunks). Four targets:
 *
 * - direct: the upstream itself (the baseline every "added" figure subtracts);
 * - portkey: `@portkey-ai/gateway` → upstream (provider openai, custom host);
 * - buyer: `svc buyer start` → libp2p → `svc seller start` → upstream;
 * - gateway: `svc gateway start --buyer-url` (SQLite, a key with limits) → buyer in another
 *   process → seller → upstream;
 * - embedded: `svc gateway start` with its buyer in its own process (the default since
 *   docs/decisions/180-gateway-runs-its-buyer.md) → seller → upstream;
 * - floor and floorChain: the same hops with svc's network layer (one libp2p stream per request,
 *   Noise, yamux, svc's frames) and none of svc's request handling (bench/floorNode.ts), bare
 *   and behind a bare proxy where the gateway stands: what the architecture's parts cost alone;
 * - tcpFloor: that floor with plain TCP instead of libp2p: what the hops and HTTP cost alone
 *   (the three floors run with `BENCH_COMPARE_FLOOR=1`; decision 162).
 *
 * Two lanes after Busbar's harness follow (bench/compareLanes.ts): the most req/s with p99 < 1 s
 * when the upstream takes 20 ms, and messages → chat (translated) added latency on svc's targets.
 *
 * Every svc component is its own process, as deployed, and runs the compiled package as installed
 * (`npm run build`, then `bin/svc.js` beside `dist/`; the floors load svc's modules from the same
 * `dist/`); `BENCH_SVC_SOURCES=1` runs the TypeScript sources through tsx instead, for profiles
 * (bench/installed.ts). Portkey runs its compiled JavaScript. Sequential latency and streams are
 * measured round by round, one request to each target per round in an order shuffled per
 * round (`roundOrder`), so every target sees the same machine and none always follows another.
 * Requests/s at 32 concurrent runs each target twice, in order then in reverse, and sums. Every figure is printed beside Portkey's, as a ratio.
 * `BENCH_COMPARE_ROUNDS` (default 1000) sets the number of sequential rounds;
 * `BENCH_CPU_PROF_DIR=<dir>` runs seller, buyer and both gateways under `node --cpu-prof`;
 * `BENCH_NODE_ARGS_<SELLER|BUYER|GATEWAY|EMBEDDED>` adds node flags to one of them
 * (bench/svcProcesses.ts). Portkey is started by bench/portkey.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { type Client, send, sendStream } from './compareClient.js';
import { sustained, translated } from './compareLanes.js';
import { messagesBodies, requestBodies, SLOW_USER, UPSTREAM_SCRIPT } from './compareTraffic.js';
import { startFloor } from './floorPath.js';
import { fromSources, svcModules } from './installed.js';
import {
  cpuMsOf,
  freePort,
  printFigure,
  roundOrder,
  startChild,
  stats,
  throughput,
} from './lib.js';
import { startPortkey } from './portkey.js';
import { startEmbedded, startRemoteGateway, startSellerAndBuyer } from './svcProcesses.js';

const ALL_TARGETS = [
  'direct',
  'portkey',
  'tcpFloor',
  'floor',
  'floorChain',
  'buyer',
  'gateway',
  'embedded',
] as const;
type Target = (typeof ALL_TARGETS)[number];
const FLOOR_TARGETS: readonly Target[] = ['tcpFloor', 'floor', 'floorChain'];
/**
 * The floors run only with `BENCH_COMPARE_FLOOR=1` (beside svc's targets) or `=only` (instead of
 * them): more targets per round leave every process colder at its turn, and every added figure
 * higher (Portkey's too), so only runs with the same targets are comparable.
 */
const FLOOR_MODE = process.env.BENCH_COMPARE_FLOOR;
const WITH_FLOOR = FLOOR_MODE === '1' || FLOOR_MODE === 'only';
const TARGETS = ALL_TARGETS.filter((target) =>
  FLOOR_TARGETS.includes(target)
    ? WITH_FLOOR
    : FLOOR_MODE !== 'only' || target === 'direct' || target === 'portkey',
);
const ROUNDS = Number(process.env.BENCH_COMPARE_ROUNDS ?? 1000);
const STREAM_ROUNDS = Math.max(50, Math.floor(ROUNDS / 5));
const CONCURRENCY = 32;
const RATE_MS = 2000;

type PerTarget<T> = Record<Target, T>;
const perTarget = <T>(make: (target: Target) => T) =>
  Object.fromEntries(TARGETS.map((target) => [target, make(target)])) as PerTarget<T>;
const order = (round: number) => roundOrder(TARGETS, round);

async function sequential(clients: PerTarget<Client>, bodies: string[]) {
  const samples = perTarget<number[]>(() => []);
  for (let round = -100; round < ROUNDS; round++) {
    for (const target of order(round + 100)) {
      const start = performance.now();
      await send(clients[target], bodies[(round + 100) % bodies.length]!);
      if (round >= 0) samples[target].push(performance.now() - start);
    }
  }
  return perTarget((target) => stats(samples[target]));
}

async function streamed(clients: PerTarget<Client>, bodies: string[]) {
  const first = perTarget<number[]>(() => []);
  const last = perTarget<number[]>(() => []);
  for (let round = -20; round < STREAM_ROUNDS; round++) {
    for (const target of order(round + 20)) {
      const timing = await sendStream(clients[target], bodies[(round + 20) % bodies.length]!);
      if (round < 0) continue;
      first[target].push(timing.first);
      last[target].push(timing.last);
    }
  }
  return perTarget((target) => ({
    firstByte: stats(first[target]),
    lastByte: stats(last[target]),
  }));
}

async function rates(clients: PerTarget<Client>, bodies: string[], pids: Record<string, number>) {
  const totals = perTarget(() => ({
    operations: 0,
    errors: 0,
    seconds: 0,
    cpuMs: {} as Record<string, number>,
  }));
  let next = 0;
  for (const target of [...TARGETS, ...[...TARGETS].reverse()]) {
    const before = Object.fromEntries(
      Object.entries(pids).map(([n, pid]) => [n, cpuMsOf(pid) ?? 0]),
    );
    const result = await throughput(() => send(clients[target], bodies[next++ % bodies.length]!), {
      concurrency: CONCURRENCY,
      durationMs: RATE_MS,
    });
    const total = totals[target];
    total.operations += result.operations;
    total.errors += result.errors;
    total.seconds += result.operations / result.opsPerSecond;
    for (const [name, pid] of Object.entries(pids))
      total.cpuMs[name] = (total.cpuMs[name] ?? 0) + ((cpuMsOf(pid) ?? 0) - before[name]!);
  }
  return perTarget((target) => {
    const { operations, errors, seconds, cpuMs } = totals[target];
    const cpuUsPerRequest = Object.fromEntries(
      Object.entries(cpuMs)
        .filter(([, ms]) => ms > 0)
        .map(([name, ms]) => [name, Math.round((ms * 1000) / Math.max(1, operations))]),
    );
    return { requestsPerSecond: operations / seconds, operations, errors, cpuUsPerRequest };
  });
}

function line(label: string, value: number, portkey: number, unit: string, goal = '') {
  const ratio = portkey === 0 ? Number.NaN : value / portkey;
  console.log(
    `${label.padEnd(40)} ${value.toFixed(2).padStart(9)} ${unit.padEnd(5)} ${ratio.toFixed(2).padStart(6)}× Portkey${goal ? `  (goal ${goal})` : ''}`,
  );
  return ratio;
}

export default async function bench(): Promise<Record<string, unknown>> {
  const root = mkdtempSync(join(tmpdir(), 'svc-bench-compare-'));
  const stops: Array<() => Promise<void>> = [];
  const pools: Pool[] = [];
  try {
    const upstream = await startChild(
      ['-e', UPSTREAM_SCRIPT],
      (output) => /upstream port (\d+)/.exec(output)?.[1],
    );
    stops.push(() => upstream.stop());
    const upstreamUrl = `http://127.0.0.1:${upstream.ready}`;
    const portkeyPort = await freePort();
    const portkeyPid = await startPortkey(stops, portkeyPort);
    const { sellerPid, buyerPid, buyerUrl, buyerDir } = await startSellerAndBuyer(
      root,
      upstreamUrl,
      stops,
    );
    const floor = WITH_FLOOR ? await startFloor(upstreamUrl, stops, svcModules(root)) : undefined;
    const embedded = await startEmbedded(root, buyerDir, stops);
    const gateway = await startRemoteGateway(root, { buyerDir, buyerUrl }, stops);
    const pool = (url: string) => {
      const made = new Pool(url, { connections: 64 });
      pools.push(made);
      return made;
    };
    const path = '/v1/chat/completions';
    // Only the targets of this run have a client (the floors' only when they run).
    const clients = {
      direct: { pool: pool(upstreamUrl), path, headers: {} },
      portkey: {
        pool: pool(`http://127.0.0.1:${portkeyPort}`),
        path,
        headers: {
          authorization: 'Bearer sk-bench',
          'x-portkey-provider': 'openai',
          'x-portkey-custom-host': `${upstreamUrl}/v1`,
        },
      },
      ...(floor && {
        tcpFloor: { pool: pool(floor.tcpUrl), path, headers: {} },
        floor: { pool: pool(floor.url), path, headers: {} },
        floorChain: { pool: pool(floor.chainUrl), path, headers: {} },
      }),
      buyer: { pool: pool(buyerUrl), path, headers: {} },
      gateway: {
        pool: pool(gateway.url),
        path,
        headers: { authorization: `Bearer ${gateway.secret}` },
      },
      embedded: {
        pool: pool(embedded.url),
        path,
        headers: { authorization: `Bearer ${embedded.secret}` },
      },
    } as PerTarget<Client>;
    const bodies = requestBodies(ROUNDS * 4 + 400, false);
    const streamBodies = requestBodies(STREAM_ROUNDS * 4 + 80, true, 2);
    // The buyer needs the seller in its directory before the first request is routed.
    const deadline = Date.now() + 60_000;
    for (const ready of [clients.gateway, clients.embedded]) {
      for (;;) {
        try {
          await send(ready, bodies[0]!);
          break;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
    }

    if (process.env.BENCH_COMPARE_HOLD) {
      // Poking the running setup by hand (profiling, strace): print it and wait.
      console.log(
        JSON.stringify({ upstreamUrl, buyerUrl, gatewayUrl: gateway.url, key: gateway.secret }),
      );
      await new Promise((resolve) =>
        setTimeout(resolve, Number(process.env.BENCH_COMPARE_HOLD) * 1000),
      );
    }
    const load = [loadavg()[0]!];
    const latency = await sequential(clients, bodies);
    load.push(loadavg()[0]!);
    const streams = await streamed(clients, streamBodies);
    load.push(loadavg()[0]!);
    const rate = await rates(clients, bodies, {
      upstream: upstream.pid,
      portkey: portkeyPid,
      gateway: gateway.pid,
      embedded: embedded.pid,
      buyer: buyerPid,
      seller: sellerPid,
      ...floor?.pids,
    });
    load.push(loadavg()[0]!);
    const slowBodies = requestBodies(400, false, 5, SLOW_USER);
    const sustainedRates: Partial<Record<Target, Awaited<ReturnType<typeof sustained>>>> = {};
    for (const target of TARGETS.filter((t) => !FLOOR_TARGETS.includes(t))) {
      sustainedRates[target] = await sustained(clients[target], slowBodies);
    }
    const translatedLane = await translated(
      clients.direct,
      { buyer: clients.buyer, gateway: clients.gateway, embedded: clients.embedded },
      bodies,
      messagesBodies(400),
      Math.max(100, Math.floor(ROUNDS / 4)),
    );
    load.push(loadavg()[0]!);

    const added = perTarget((target) => ({
      p50Ms: latency[target].p50Ms - latency.direct.p50Ms,
      p99Ms: latency[target].p99Ms - latency.direct.p99Ms,
      firstByteP50Ms: streams[target].firstByte.p50Ms - streams.direct.firstByte.p50Ms,
      lastByteP50Ms: streams[target].lastByte.p50Ms - streams.direct.lastByte.p50Ms,
    }));
    console.log(
      `svc ${fromSources ? 'from the sources (tsx)' : 'compiled (dist/)'}; ${ROUNDS} rounds sequential, ${STREAM_ROUNDS} streamed; load average (1 min) ${load.map((l) => l.toFixed(2)).join(' → ')}`,
    );
    console.log(
      `direct: sustained ${sustainedRates.direct?.requestsPerSecond.toFixed(0)} req/s at 20 ms upstream (p99 < 1 s)`,
    );
    console.log(
      `direct: p50 ${latency.direct.p50Ms.toFixed(2)} ms, p99 ${latency.direct.p99Ms.toFixed(2)} ms; stream first byte ${streams.direct.firstByte.p50Ms.toFixed(2)} ms, last ${streams.direct.lastByte.p50Ms.toFixed(2)} ms; ${rate.direct.requestsPerSecond.toFixed(0)} req/s`,
    );
    const ratios: Record<string, Record<string, number>> = {};
    for (const target of TARGETS.filter((t): t is Exclude<Target, 'direct'> => t !== 'direct')) {
      const name = {
        portkey: 'Portkey',
        tcpFloor: 'TCP floor buyer→seller',
        floor: 'floor buyer→seller',
        floorChain: 'floor proxy→buyer→seller',
        buyer: 'svc buyer→seller',
        gateway: 'svc gateway→buyer→seller',
        embedded: 'svc gateway+buyer→seller',
      }[target];
      const goals =
        target === 'buyer'
          ? { p50: '≤ 0.75×', ttfb: '≤ 1.0×', rate: '' }
          : target === 'embedded'
            ? { p50: '≤ 1.0×', ttfb: '≤ 0.2×', rate: '≥ 1.5×' }
            : { p50: '', ttfb: '', rate: '' };
      ratios[target] = {
        addedP50: line(
          `${name}: added p50`,
          added[target].p50Ms,
          added.portkey.p50Ms,
          'ms',
          goals.p50,
        ),
        addedP99: line(
          `${name}: added p99`,
          added[target].p99Ms,
          added.portkey.p99Ms,
          'ms',
          target === 'embedded' ? '≤ 1.0×' : '',
        ),
        addedFirstByteP50: line(
          `${name}: stream first byte added p50`,
          added[target].firstByteP50Ms,
          added.portkey.firstByteP50Ms,
          'ms',
          goals.ttfb,
        ),
        addedLastByteP50: line(
          `${name}: stream last byte added p50`,
          added[target].lastByteP50Ms,
          added.portkey.lastByteP50Ms,
          'ms',
        ),
        requestsPerSecond: line(
          `${name}: req/s at ${CONCURRENCY} concurrent`,
          rate[target].requestsPerSecond,
          rate.portkey.requestsPerSecond,
          'req/s',
          goals.rate,
        ),
      };
      const slow = sustainedRates[target];
      if (slow) {
        ratios[target]!.sustainedRequestsPerSecond = line(
          `${name}: sustained req/s, 20 ms upstream, p99 < 1 s`,
          slow.requestsPerSecond,
          sustainedRates.portkey?.requestsPerSecond ?? Number.NaN,
          'req/s',
          target === 'embedded' ? '≥ 1.5×' : '',
        );
      }
      const viaMessages = translatedLane[target];
      if (viaMessages) {
        ratios[target]!.translatedAddedP50 = line(
          `${name}: messages→chat added p50`,
          viaMessages.addedP50Ms,
          added.portkey.p50Ms,
          'ms',
        );
        ratios[target]!.translatedAddedP99 = line(
          `${name}: messages→chat added p99`,
          viaMessages.addedP99Ms,
          added.portkey.p99Ms,
          'ms',
        );
      }
      printFigure(`${name}: errors at ${CONCURRENCY} concurrent`, rate[target].errors, '', '0');
      console.log(`${name}: CPU µs per request ${JSON.stringify(rate[target].cpuUsPerRequest)}`);
    }
    const over = (ours: Target, floorOf: Target) =>
      `+${(added[ours].p50Ms - added[floorOf].p50Ms).toFixed(2)} ms p50`;
    if (WITH_FLOOR)
      console.log(`libp2p over plain TCP (floor − TCP floor): ${over('floor', 'tcpFloor')}`);
    if (WITH_FLOOR && FLOOR_MODE !== 'only') {
      console.log(
        `svc's request handling over the floor: buyer→seller ${over('buyer', 'floor')}, gateway→buyer→seller ${over('gateway', 'floorChain')}, gateway+buyer→seller ${over('embedded', 'floor')}`,
      );
    }
    return {
      svc: fromSources ? 'sources' : 'compiled',
      rounds: ROUNDS,
      streamRounds: STREAM_ROUNDS,
      loadAverage: load,
      latency,
      added,
      streams,
      rate,
      sustained: sustainedRates,
      translated: translatedLane,
      ratios,
    };
  } finally {
    for (const made of pools) await made.close().catch(() => undefined);
    for (const stop of stops) await stop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  }
}
