/**
 * Gateway overhead over the buyer (a stub buyer on loopback), every figure measured in the same
 * run as its baseline. The headline is the gateway as deployed: its own process (`svc gateway
 * start`, SQLite, a key with limits: auth, reservation, settlement and a log row per request).
 * The gateway running inside this process is measured too (no process hops: closer to its bare
 * CPU cost). Latency samples alternate call by call between the gateway and the direct baseline,
 * so both see the same machine (2 shared cores: this process — client and stub buyer — and the
 * gateway process compete for them; so do other jobs on the machine). Then requests/s, the
 * gateway process's CPU per request, and the overspend scenario (200 concurrent requests on a
 * key with room for 10) on both gateways. A bare forwarding process (no auth, budgets or logs)
 * is measured the same way: what the extra process and HTTP hop cost on their own.
 */

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { createKey, createStore, type GatewayStore } from '../src/gateway/index.js';
import { startGatewayProcess, startHarness } from '../src/gateway/testing/index.js';
import { IdentityStore } from '../src/identity/index.js';
import { printComparison, printFigure, type Stats, stats, throughput } from './lib.js';

/** CPU time (user + system, ms) a process has used, from /proc (Linux); null elsewhere. */
function cpuMsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/**
 * The floor of any gateway process: a bare forwarder (node:http server + undici pool, like the
 * gateway) with no auth, budgets or logs. Its overhead is the extra process and HTTP hop alone.
 */
const BARE_PROXY = `
const { createServer } = require('node:http');
const { Pool } = require('undici');
const buyer = new Pool(process.argv[1], { connections: 128, pipelining: 1 });
const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const up = await buyer.request({
    method: req.method, path: req.url, headers: { 'content-type': 'application/json' },
    body: Buffer.concat(chunks),
  });
  const body = Buffer.from(await up.body.arrayBuffer());
  const headers = { ...up.headers };
  delete headers['keep-alive'];
  delete headers.connection;
  res.writeHead(up.statusCode, headers);
  res.end(body);
});
server.keepAliveTimeout = 65000;
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port));
process.once('SIGTERM', () => process.exit(0));
`;

async function startBareProxy(buyerUrl: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', BARE_PROXY, buyerUrl], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare proxy exited (${code})`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(chunk.toString());
      if (match) resolve(match[1]!);
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

const BODY = JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }] });
const ITERATIONS = 3000;
const WARMUP = 300;

type Call = () => Promise<void>;

/** One chat completion; resolves to the status code. */
async function send(pool: Pool, secret: string | null): Promise<number> {
  const response = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: {
      'content-type': 'application/json',
      ...(secret ? { authorization: `Bearer ${secret}` } : {}),
    },
    body: BODY,
  });
  await response.body.dump();
  return response.statusCode;
}

function caller(pool: Pool, secret: string | null): Call {
  return async () => {
    const status = await send(pool, secret);
    if (status !== 200) throw new Error(`status ${status}`);
  };
}

/** Latency of `ours` and `baseline`, one call of each in turn (same conditions for both). */
async function interleaved(ours: Call, baseline: Call): Promise<{ ours: Stats; baseline: Stats }> {
  for (let i = 0; i < WARMUP; i++) {
    await baseline();
    await ours();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    let start = performance.now();
    await baseline();
    b.push(performance.now() - start);
    start = performance.now();
    await ours();
    a.push(performance.now() - start);
  }
  return { ours: stats(a), baseline: stats(b) };
}

function printLatency(label: string, result: { ours: Stats; baseline: Stats }) {
  const { ours, baseline } = result;
  printComparison(`${label}: latency p50 vs buyer`, ours.p50Ms, baseline.p50Ms, 'ms');
  printComparison(`${label}: latency p99 vs buyer`, ours.p99Ms, baseline.p99Ms, 'ms');
  const overheadP50 = ours.p50Ms - baseline.p50Ms;
  const overheadP99 = ours.p99Ms - baseline.p99Ms;
  printFigure(`${label}: overhead p50`, overheadP50, 'ms', '<= 0.5 ms');
  printFigure(`${label}: overhead p99`, overheadP99, 'ms', '<= 2 ms');
  return { ours, baseline, overheadP50Ms: overheadP50, overheadP99Ms: overheadP99 };
}

/** 200 concurrent requests on a key with room for 10 (1 µUSD each); `store` reads the outcome. */
async function overspend(
  label: string,
  pool: Pool,
  key: { id: string; secret: string },
  store: GatewayStore,
) {
  const statuses = await Promise.all(Array.from({ length: 200 }, () => send(pool, key.secret)));
  const succeeded = statuses.filter((s) => s === 200).length;
  const refused = statuses.filter((s) => s === 402).length;
  // Settlement follows the answer: wait (bounded) until every success is in the ledger.
  const deadline = Date.now() + 5000;
  while ((await store.keyUsage(key.id)).requests < succeeded && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const counter = (await store.periodSpend('key', key.id, Date.now())).total;
  const ledger = await store.ledgerTotal(key.id);
  printFigure(
    `${label}: overspend, succeeded of 200 (room 10)`,
    succeeded,
    'requests',
    'exactly 10',
  );
  console.log(
    `${label}: overspend, ${refused} refused (402); spend ${counter} µUSD of limit 10 µUSD; counter ${counter === ledger ? 'equals' : 'DIFFERS FROM'} ledger (${ledger})`,
  );
  return { requests: 200, room: 10, succeeded, refused, spentMicro: counter, ledgerMicro: ledger };
}

export default async function bench(): Promise<Record<string, unknown>> {
  const h = await startHarness({
    // Listed prices: every reservation is sized to the request (decision 121).
    buyer: {
      costUsd: '0.000001',
      keepHistory: false,
      prices: { inputUsdPerMillion: 1, outputUsdPerMillion: 2 },
    },
    gateway: { maxRequestCostUsd: '0.000001' },
  });
  // The gateway as deployed: `svc gateway start` in its own process, its own SQLite file.
  const processDir = join(h.dataDir, 'process');
  const setupStore = await createStore({ dataDir: processDir });
  const identities = new IdentityStore(processDir, {});
  const processKey = await createKey(
    setupStore,
    identities,
    { label: 'bench', limits: { total: 1_000_000_000n } },
    Date.now(),
  );
  const processLimited = await createKey(
    setupStore,
    identities,
    { label: 'room-for-10', limits: { total: 10n } },
    Date.now(),
  );
  await setupStore.close();
  writeFileSync(
    join(processDir, 'config.json'),
    JSON.stringify({ gateway: { maxRequestCostUsd: '0.000001' } }),
  );
  const child = await startGatewayProcess({ dataDir: processDir, buyerUrl: h.buyer.url });
  const bare = await startBareProxy(h.buyer.url);

  const direct = new Pool(h.buyer.url, { connections: 64 });
  const inProcess = new Pool(h.gateway.url, { connections: 64 });
  const viaProcess = new Pool(child.url, { connections: 64 });
  const viaBare = new Pool(bare.url, { connections: 64 });
  try {
    const { secret } = await h.key({ limits: { total: 1_000_000_000n } });
    const directCall = caller(direct, null);
    const processCall = caller(viaProcess, processKey.secret);
    const inProcessCall = caller(inProcess, secret);
    console.log(
      `latency: ${ITERATIONS} requests each, alternating with direct calls to the stub buyer`,
    );
    const separateLatency = printLatency(
      'separate process',
      await interleaved(processCall, directCall),
    );
    const inProcessLatency = printLatency(
      'in-process',
      await interleaved(inProcessCall, directCall),
    );
    const bareLatency = await interleaved(caller(viaBare, null), directCall);
    const bareP50 = bareLatency.ours.p50Ms - bareLatency.baseline.p50Ms;
    const bareP99 = bareLatency.ours.p99Ms - bareLatency.baseline.p99Ms;
    printFigure('bare proxy process (the hop alone): overhead p50', bareP50, 'ms');
    printFigure('bare proxy process (the hop alone): overhead p99', bareP99, 'ms');
    printComparison(
      'separate process vs bare proxy: overhead p50',
      separateLatency.overheadP50Ms,
      bareP50,
      'ms',
    );
    printComparison(
      'separate process vs bare proxy: overhead p99',
      separateLatency.overheadP99Ms,
      bareP99,
      'ms',
    );

    const directRate = await throughput(directCall, { concurrency: 32, durationMs: 3000 });
    const cpuBefore = cpuMsOf(child.pid);
    const processRate = await throughput(processCall, { concurrency: 32, durationMs: 3000 });
    const cpuAfter = cpuMsOf(child.pid);
    const inProcessRate = await throughput(inProcessCall, { concurrency: 32, durationMs: 3000 });
    const cpuMsPerRequest =
      cpuBefore === null || cpuAfter === null
        ? null
        : (cpuAfter - cpuBefore) / processRate.operations;
    printComparison(
      'separate process: throughput vs direct',
      processRate.opsPerSecond,
      directRate.opsPerSecond,
      'req/s',
    );
    printFigure('separate process: throughput', processRate.opsPerSecond, 'req/s', '>= 2000 req/s');
    printComparison(
      'in-process: throughput vs direct',
      inProcessRate.opsPerSecond,
      directRate.opsPerSecond,
      'req/s',
    );
    if (cpuMsPerRequest !== null) {
      // Load-independent: what one request costs the gateway process, and what one core allows.
      printFigure('separate process: gateway CPU per request', cpuMsPerRequest, 'ms');
      printFigure('  = requests/s one free core could serve', 1000 / cpuMsPerRequest, 'req/s');
    }

    const limited = await h.key({ limits: { total: 10n } });
    const overspendInProcess = await overspend(
      'in-process',
      inProcess,
      { id: limited.key.id, secret: limited.secret },
      h.store,
    );
    // The separate gateway's database, read through a connection of this process.
    const processStore = await createStore({ dataDir: processDir });
    let overspendProcess: Awaited<ReturnType<typeof overspend>>;
    try {
      overspendProcess = await overspend(
        'separate process',
        viaProcess,
        { id: processLimited.key.id, secret: processLimited.secret },
        processStore,
      );
    } finally {
      await processStore.close();
    }
    return {
      latency: {
        separateProcess: separateLatency,
        inProcess: inProcessLatency,
        bareProxy: { ...bareLatency, overheadP50Ms: bareP50, overheadP99Ms: bareP99 },
      },
      throughput: {
        direct: directRate,
        separateProcess: processRate,
        inProcess: inProcessRate,
        separateProcessCpuMsPerRequest: cpuMsPerRequest,
      },
      overspend: { inProcess: overspendInProcess, separateProcess: overspendProcess },
    };
  } finally {
    await viaBare.close();
    await bare.stop();
    await viaProcess.close();
    await child.stop();
    await direct.close();
    await inProcess.close();
    await h.stop();
  }
}
