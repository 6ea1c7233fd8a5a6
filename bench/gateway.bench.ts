/**
 * Gateway overhead over the buyer (stub buyer on loopback), measured in the same run:
 * latency p50/p99 direct vs through the gateway (SQLite, a key with limits: auth, reservation,
 * settlement and log row on every request), requests/s both ways, and the overspend scenario
 * (200 concurrent requests on a key with room for 10).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createKey, createStore } from '../src/gateway/index.js';
import { startGatewayProcess, startHarness } from '../src/gateway/testing/index.js';
import { IdentityStore } from '../src/identity/index.js';
import { measure, printComparison, printFigure, throughput } from './lib.js';

/** CPU time (user + system, ms) a process has used, from /proc (Linux); null elsewhere. */
function cpuMsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

const BODY = JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }] });

export default async function bench(): Promise<Record<string, unknown>> {
  const h = await startHarness({
    buyer: { costUsd: '0.000001' },
    gateway: { maxRequestCostUsd: '0.000001' },
  });
  const direct = new Pool(h.buyer.url, { connections: 64 });
  const viaGateway = new Pool(h.gateway.url, { connections: 64 });
  try {
    const { secret } = await h.key({ limits: { total: 1_000_000_000n } });
    const call = (pool: Pool, auth: boolean) => async () => {
      const response = await pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: {
          'content-type': 'application/json',
          ...(auth ? { authorization: `Bearer ${secret}` } : {}),
        },
        body: BODY,
      });
      await response.body.dump();
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
    };
    const baseline = await measure(call(direct, false), { iterations: 2000, warmup: 200 });
    const ours = await measure(call(viaGateway, true), { iterations: 2000, warmup: 200 });
    printComparison('latency p50 (gateway+buyer vs buyer)', ours.p50Ms, baseline.p50Ms, 'ms');
    printComparison('latency p99 (gateway+buyer vs buyer)', ours.p99Ms, baseline.p99Ms, 'ms');
    const overheadP50 = ours.p50Ms - baseline.p50Ms;
    const overheadP99 = ours.p99Ms - baseline.p99Ms;
    printFigure('gateway overhead p50', overheadP50, 'ms', '<= 0.5 ms');
    printFigure('gateway overhead p99', overheadP99, 'ms', '<= 2 ms');
    const directRate = await throughput(call(direct, false), { concurrency: 32, durationMs: 3000 });
    const gatewayRate = await throughput(call(viaGateway, true), {
      concurrency: 32,
      durationMs: 3000,
    });
    printComparison(
      'throughput (gateway vs direct)',
      gatewayRate.opsPerSecond,
      directRate.opsPerSecond,
      'req/s',
    );
    printFigure(
      'throughput through the gateway',
      gatewayRate.opsPerSecond,
      'req/s',
      '>= 2000 req/s',
    );

    // The gateway in its own process (as deployed): client and stub buyer share this one.
    const processDir = join(h.dataDir, 'process');
    const processStore = await createStore({ dataDir: processDir });
    const processKey = await createKey(
      processStore,
      new IdentityStore(processDir, {}),
      { label: 'bench', limits: { total: 1_000_000_000n } },
      Date.now(),
    );
    await processStore.close();
    writeFileSync(
      join(processDir, 'config.json'),
      JSON.stringify({ gateway: { maxRequestCostUsd: '0.000001' } }),
    );
    const child = await startGatewayProcess({ dataDir: processDir, buyerUrl: h.buyer.url });
    const viaProcess = new Pool(child.url, { connections: 64 });
    let separate: { latency: unknown; throughput: unknown; cpuMsPerRequest: number | null };
    try {
      const callProcess = async () => {
        const response = await viaProcess.request({
          method: 'POST',
          path: '/v1/chat/completions',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${processKey.secret}`,
          },
          body: BODY,
        });
        await response.body.dump();
        if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
      };
      const latency = await measure(callProcess, { iterations: 2000, warmup: 200 });
      const cpuBefore = cpuMsOf(child.pid);
      const rate = await throughput(callProcess, { concurrency: 32, durationMs: 3000 });
      const cpuAfter = cpuMsOf(child.pid);
      const cpuMsPerRequest =
        cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / rate.operations;
      printComparison(
        'separate process: latency p50 vs buyer',
        latency.p50Ms,
        baseline.p50Ms,
        'ms',
      );
      printComparison(
        'separate process: latency p99 vs buyer',
        latency.p99Ms,
        baseline.p99Ms,
        'ms',
      );
      printFigure('separate process: throughput', rate.opsPerSecond, 'req/s', '>= 2000 req/s');
      if (cpuMsPerRequest !== null) {
        // Load-independent: what one request costs the gateway process, and what one core allows.
        printFigure('separate process: gateway CPU per request', cpuMsPerRequest, 'ms');
        printFigure('  = requests/s one free core could serve', 1000 / cpuMsPerRequest, 'req/s');
      }
      separate = { latency, throughput: rate, cpuMsPerRequest };
    } finally {
      await viaProcess.close();
      await child.stop();
    }

    const limited = await h.key({ limits: { total: 10n } });
    const statuses = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const response = await viaGateway.request({
          method: 'POST',
          path: '/v1/chat/completions',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${limited.secret}`,
          },
          body: BODY,
        });
        await response.body.dump();
        return response.statusCode;
      }),
    );
    const deadline = Date.now() + 5000;
    while ((await h.store.keyUsage(limited.key.id)).requests < 10 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const succeeded = statuses.filter((s) => s === 200).length;
    const counter = (await h.store.periodSpend('key', limited.key.id, Date.now())).total;
    const ledger = await h.store.ledgerTotal(limited.key.id);
    printFigure('overspend: succeeded of 200 on room for 10', succeeded, 'requests', 'exactly 10');
    console.log(
      `overspend: spend ${counter} µUSD of limit 10 µUSD; counter ${counter === ledger ? 'equals' : 'DIFFERS FROM'} ledger (${ledger})`,
    );
    return {
      latency: { ours, baseline, overheadP50Ms: overheadP50, overheadP99Ms: overheadP99 },
      throughput: { gateway: gatewayRate, direct: directRate },
      separateProcess: separate,
      overspend: { requests: 200, room: 10, succeeded, spentMicro: counter, ledgerMicro: ledger },
    };
  } finally {
    await direct.close();
    await viaGateway.close();
    await h.stop();
  }
}
