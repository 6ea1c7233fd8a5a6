/**
 * What paying adds to a request through the buyer proxy (decision 161). `npm run bench -- compare`
 * runs free offers: no voucher is signed or checked and the buyer counts no prompt. Here one
 * seller offers a paid and a free service from the same fake upstream, on a real anvil chain
 * (channel open, vouchers signed by the buyer and checked by the seller), libp2p on loopback and
 * the buyer's HTTP proxy, all in this one process (src/node/testing/paidFixture.ts).
 *
 * Sequential requests alternate paid and free round by round, each with a different 0.5–4 KB
 * prompt (bench/compareTraffic.ts); then a block of each measures CPU per request of this process
 * (buyer, seller and the load generator; anvil is its own process).
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { PaidNetwork } from '../src/node/testing/paidFixture.js';
import { startFakeUpstream } from '../src/seller/testing/index.js';
import { requestBodies } from './compareTraffic.js';
import { printFigure, stats } from './lib.js';

const ROUNDS = Number(process.env.BENCH_PAID_ROUNDS ?? 400);
const CPU_BLOCK = 300;
const ANSWER = 'The paid answer travels back over libp2p with its usage claim. '.repeat(16);

export default async function bench(): Promise<Record<string, unknown>> {
  const net = await PaidNetwork.start({ channelLockUsd: '20.00' });
  const upstream = await startFakeUpstream({
    text: ANSWER,
    usage: { inputTokens: 100, cachedInputTokens: 0, outputTokens: 200 },
  });
  const pool = new Pool(net.buyer.url, { connections: 1 });
  try {
    await net.fundBuyer(50_000_000n);
    await net.startSeller(await net.sellerOptions(upstream));
    const bodies = requestBodies(2 * ROUNDS + 4 * CPU_BLOCK + 100, false, 5);
    let next = 0;
    const send = async (model: 'gpt-paid' | 'gpt-free'): Promise<number> => {
      const body = (bodies[next++ % bodies.length] as string).replace(
        '"model":"gpt-4o"',
        `"model":"${model}","max_tokens":300`,
      );
      const started = performance.now();
      const response = await pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`${model}: ${response.statusCode} ${text}`);
      return performance.now() - started;
    };
    for (let i = 0; i < 50; i++) {
      await send('gpt-paid');
      await send('gpt-free');
    }
    const paid: number[] = [];
    const free: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        paid.push(await send('gpt-paid'));
        free.push(await send('gpt-free'));
      } else {
        free.push(await send('gpt-free'));
        paid.push(await send('gpt-paid'));
      }
    }
    const cpuPerRequest = async (model: 'gpt-paid' | 'gpt-free'): Promise<number> => {
      const before = process.cpuUsage();
      for (let i = 0; i < CPU_BLOCK; i++) await send(model);
      const used = process.cpuUsage(before);
      return Math.round((used.user + used.system) / CPU_BLOCK);
    };
    const cpuFree = await cpuPerRequest('gpt-free');
    const cpuPaid = await cpuPerRequest('gpt-paid');
    const cpuFree2 = await cpuPerRequest('gpt-free');
    const cpuPaid2 = await cpuPerRequest('gpt-paid');
    const paidStats = stats(paid);
    const freeStats = stats(free);
    printFigure('free request p50', freeStats.p50Ms, 'ms');
    printFigure('paid request p50', paidStats.p50Ms, 'ms');
    printFigure('paying adds at p50', paidStats.p50Ms - freeStats.p50Ms, 'ms');
    printFigure('paying adds at p99', paidStats.p99Ms - freeStats.p99Ms, 'ms');
    console.log(
      `CPU µs per request of this process (two blocks each): free ${cpuFree}, ${cpuFree2}; paid ${cpuPaid}, ${cpuPaid2}`,
    );
    return {
      rounds: ROUNDS,
      free: freeStats,
      paid: paidStats,
      addedP50Ms: paidStats.p50Ms - freeStats.p50Ms,
      cpuMicrosPerRequest: { free: [cpuFree, cpuFree2], paid: [cpuPaid, cpuPaid2] },
    };
  } finally {
    await pool.close();
    await net.stop();
    await upstream.close();
  }
}
