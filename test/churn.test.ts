/**
 * Churn: paid sellers restart, freeze and lose their chain under steady load, and the network
 * keeps serving with nothing lost (docs/decisions/184-churn-test.md, docs/guide/failures.md).
 *
 * One scenario, two sizes (SVC_CHURN_SIZE): `small` runs inside `npm test` (6 sellers, 40 s, one
 * round of each fault); `full` is `npm run test:churn` (20 sellers, 5 minutes, a round every
 * 30 s). Each round kills 20 % of the sellers with SIGKILL (a random pick at full size; the
 * busiest and a random rest at small size) and starts them again with the
 * same identity, and freezes one more (SIGSTOP: its connections stay open, it answers nothing)
 * for 10 s; once, anvil is frozen for 20 s. Load: the official wire format through plain fetch,
 * half streams, to a buyer process and through a gateway process (key with a budget).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../src/testing/index.js';
import { buyerChannels, gatewaySpend, reconcile, sellerLedger } from './support/churnLedgers.js';
import {
  busiestPeers,
  countCauses,
  cutsByFault,
  type FaultEvent,
  killsWhileServing,
  type RequestOutcome,
  runLoad,
} from './support/churnLoad.js';
import { ChurnNetwork, rssOf } from './support/churnNetwork.js';

const FULL = process.env.SVC_CHURN_SIZE === 'full';
/** A longer full run (SVC_CHURN_SECONDS), to see whether memory levels off. */
const FULL_SECONDS = Number(process.env.SVC_CHURN_SECONDS ?? 300);
if (!Number.isInteger(FULL_SECONDS) || FULL_SECONDS < 60) {
  throw new Error(`SVC_CHURN_SECONDS is "${process.env.SVC_CHURN_SECONDS}": a whole number >= 60`);
}
const SIZE = FULL
  ? { sellers: 20, seconds: FULL_SECONDS, roundEverySeconds: 30, workers: 3, chainAtSeconds: 135 }
  : { sellers: 6, seconds: 40, roundEverySeconds: 60, workers: 2, chainAtSeconds: 14 };
const FAULTS = (process.env.SVC_CHURN_FAULTS ?? (FULL ? 'random' : 'busiest')) as
  | 'random'
  | 'busiest';
if (FAULTS !== 'random' && FAULTS !== 'busiest') {
  throw new Error(`SVC_CHURN_FAULTS is "${String(FAULTS)}": use random or busiest`);
}
const FIRST_ROUND_SECONDS = 5;
const FREEZE_SECONDS = 10;
const CHAIN_STOP_SECONDS = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/** Mean of the first and of the last third of the samples. */
function thirds(samples: number[]): { first: number; last: number } {
  const third = Math.max(1, Math.floor(samples.length / 3));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return { first: mean(samples.slice(0, third)), last: mean(samples.slice(-third)) };
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** Mean resident memory of each minute, in MB (samples every 2 s). */
function perMinute(samples: number[]): number[] {
  const minutes: number[] = [];
  for (let at = 0; at < samples.length; at += 30) {
    const minute = samples.slice(at, at + 30);
    minutes.push(mb(minute.reduce((a, b) => a + b, 0) / minute.length));
  }
  return minutes;
}

describe(`churn (${FULL ? 'full' : 'small'} size)`, () => {
  let net: ChurnNetwork;

  beforeAll(async () => {
    net = await ChurnNetwork.start(SIZE.sellers);
  }, 1_200_000);

  afterAll(async () => {
    await net?.stop();
  }, 120_000);

  it(
    'serves through seller restarts, a frozen seller and a frozen chain, and every micro-USD agrees',
    async () => {
      const t0 = Date.now();
      const stopLoad = new AbortController();
      const outcomes: RequestOutcome[] = [];
      const load = runLoad(
        [
          { name: 'buyer', baseUrl: `${net.buyer!.url}/v1`, headers: {} },
          {
            name: 'gateway',
            baseUrl: `${net.gatewayUrl}/v1`,
            headers: { authorization: `Bearer ${net.gatewayKey}` },
          },
        ],
        SIZE.workers,
        stopLoad.signal,
        t0,
        outcomes,
      );
      const pids = net.pids();
      const memory = { buyer: [] as number[], gateway: [] as number[] };
      const sampler = setInterval(() => {
        memory.buyer.push(rssOf(pids.buyer));
        memory.gateway.push(rssOf(pids.gateway));
      }, 2_000);

      const faults: string[] = [];
      /** The sellers (peer ids) killed or frozen at some point: the only ones a stream may fail on. */
      const faulted = new Set<string>();
      const faultEvents: FaultEvent[] = [];
      const pending: Promise<void>[] = [];
      const note = (text: string) =>
        faults.push(`${((Date.now() - t0) / 1000).toFixed(1)} s ${text}`);
      // A seller whose restart is still under way (a slow start, or retries while the chain is
      // frozen) is left out of the next round: a second start of it would race the first for its port.
      const restarting = new Set<number>();
      const restart = async (index: number) => {
        restarting.add(index);
        try {
          await restartOnce(index);
        } finally {
          restarting.delete(index);
        }
      };
      const restartOnce = async (index: number) => {
        const seller = net.sellers[index]!;
        const peer = seller.address.slice(2).toLowerCase();
        faulted.add(peer);
        faultEvents.push({ at: Date.now() - t0, kind: 'kill', peer });
        await seller.process.kill();
        note(`seller ${index} (${seller.address.slice(2, 10)}) killed -9`);
        // A seller checks the chain when it starts and waits for it (decision 207); one that still
        // fails to start is started again, as a supervisor would.
        for (let attempt = 0; ; attempt++) {
          try {
            await seller.process.start();
            note(`seller ${index} back`);
            return;
          } catch (error) {
            note(`seller ${index} did not start: ${String(error).slice(0, 160)}`);
            if (attempt >= 10) throw error;
            await sleep(3_000);
          }
        }
      };
      const round = (number: number) => {
        // Full size: the fault model, a uniformly random 20 % killed and one more frozen, as
        // a crash does not choose a seller by its load. Small size (one round): the router keeps to
        // the best few sellers, so a random pick might cut no stream at all; the busiest seller of
        // the last 5 s is killed (a live stream is cut) and the second busiest frozen, the other
        // kills a random pick of the rest. SVC_CHURN_FAULTS=busiest runs that stricter model at full
        // size too (docs/decisions/184-churn-test.md).
        const free = net.sellers.map((_, i) => i).filter((i) => !restarting.has(i));
        let order: number[];
        let frozen: number;
        if (FAULTS === 'random') {
          order = shuffled(free);
          frozen = order.pop()!;
        } else {
          const busy = busiestPeers(outcomes, Date.now() - t0 - 5_000);
          const indexOf = (peer: string) => net.sellers.findIndex((s) => s.address === `0x${peer}`);
          const busyIndexes = busy.map(indexOf).filter((i) => free.includes(i));
          const rest = shuffled(free.filter((i) => !busyIndexes.includes(i)));
          const others = shuffled([...busyIndexes.slice(2), ...rest]);
          frozen = busyIndexes[1] ?? others.pop()!;
          order = [...busyIndexes.slice(0, 1), ...others];
        }
        const killCount = Math.ceil(SIZE.sellers * 0.2);
        for (const index of order.slice(0, killCount)) pending.push(restart(index));
        pending.push(
          (async () => {
            const peer = net.sellers[frozen]!.address.slice(2).toLowerCase();
            faulted.add(peer);
            faultEvents.push({ at: Date.now() - t0, kind: 'freeze', peer });
            net.sellers[frozen]!.process.signal('SIGSTOP');
            note(`seller ${frozen} frozen (round ${number})`);
            await sleep(FREEZE_SECONDS * 1000);
            net.sellers[frozen]!.process.signal('SIGCONT');
            note(`seller ${frozen} thawed`);
          })(),
        );
      };
      const timers: NodeJS.Timeout[] = [];
      let number = 0;
      for (let at = FIRST_ROUND_SECONDS; at < SIZE.seconds - 10; at += SIZE.roundEverySeconds) {
        timers.push(setTimeout(() => round(++number), at * 1000));
      }
      timers.push(
        setTimeout(() => {
          pending.push(
            (async () => {
              process.kill(net.chain.anvil.pid, 'SIGSTOP');
              note('chain frozen');
              await sleep(CHAIN_STOP_SECONDS * 1000);
              process.kill(net.chain.anvil.pid, 'SIGCONT');
              note('chain thawed');
            })(),
          );
        }, SIZE.chainAtSeconds * 1000),
      );

      await sleep(SIZE.seconds * 1000);
      stopLoad.abort();
      for (const timer of timers) clearTimeout(timer);
      await load;
      await Promise.all(pending);
      clearInterval(sampler);
      // The last voucher of each channel waits for a next request to carry it, then goes on its
      // own, again while it fails (docs/decisions/161-paid-request-checks-and-counting-garbage.md,
      // docs/decisions/185-vouchers-kept-until-delivered.md): the ledgers are compared once they
      // agree, or after a bounded wait, while the sellers run; then once more with them stopped.
      const check = async () =>
        reconcile({
          buyers: {
            buyer: await buyerChannels(net.buyer!.url),
            gateway: await buyerChannels(net.gatewayBuyerUrl),
          },
          sellers: net.sellers.map((seller) => sellerLedger(seller.dataDir)),
          contract: net.chain.contract,
          gatewayBuyer: 'gateway',
          gatewaySpent: await gatewaySpend(net.gatewayUrl, net.gatewayKey),
        });
      const settledAt = Date.now();
      let money = await check();
      while (money.disagreements.length > 0 && Date.now() - settledAt < 60_000) {
        await sleep(1_000);
        money = await check();
      }
      const agreedAfterSeconds = Number(((Date.now() - settledAt) / 1000).toFixed(1));
      await Promise.all(net.sellers.map((seller) => seller.process.stop()));
      money = await check();

      const successes = outcomes.filter((o) => o.ok).length;
      const failures = outcomes.filter((o) => !o.ok);
      const beforeAnyByte = failures.filter((o) => !o.started);
      const buyerRss = thirds(memory.buyer);
      const gatewayRss = thirds(memory.gateway);
      const summary = {
        size: FULL ? 'full' : 'small',
        sellers: SIZE.sellers,
        faultModel: FAULTS,
        seconds: SIZE.seconds,
        requests: outcomes.length,
        successes,
        successShare: Number((successes / Math.max(1, outcomes.length)).toFixed(5)),
        failuresByCause: countCauses(failures),
        // Streams cut after their first byte, by the fault that hit their own seller meanwhile.
        streamsCutBy: cutsByFault(outcomes, faultEvents),
        killedWhileServing: killsWhileServing(outcomes, faultEvents),
        servedBy: countCauses(outcomes.map((o) => ({ ...o, cause: o.peer?.slice(0, 8) ?? '-' }))),
        failuresBeforeAnyByte: beforeAnyByte.map(
          (o) =>
            `${(o.at / 1000).toFixed(1)} s ${o.target} ${o.cause} tried ${o.attempts}: ${o.message}`,
        ),
        truncated: failures
          .filter((o) => o.cause === 'midstream:truncated')
          .map((o) => `${(o.at / 1000).toFixed(1)} s ${o.target} ${o.peer}: ${o.message}`),
        money: { ...money, agreedAfterSeconds },
        memoryMb: {
          buyer: { firstThird: mb(buyerRss.first), lastThird: mb(buyerRss.last) },
          gateway: { firstThird: mb(gatewayRss.first), lastThird: mb(gatewayRss.last) },
          perMinute: { buyer: perMinute(memory.buyer), gateway: perMinute(memory.gateway) },
        },
        faults,
      };
      const dir = tempDir('svc-churn-summary-');
      const file = join(dir, 'churn-summary.json');
      writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
      // Every request's outcome and every fault, one JSON line each, to look into a run afterwards.
      const lines = [...outcomes, ...faultEvents.map((f) => ({ fault: f }))];
      writeFileSync(
        join(dir, 'churn-outcomes.jsonl'),
        lines.map((l) => JSON.stringify(l)).join('\n'),
      );
      console.log(`churn summary (${file}):\n${JSON.stringify(summary, null, 2)}`);

      expect(outcomes.length).toBeGreaterThan(0);
      // Nothing fails before its first byte while other sellers of the model are up: a failure
      // before any byte is a routing bug (the buyer had somewhere else to send it).
      expect(summary.failuresBeforeAnyByte).toEqual([]);
      // Full size: the goal. Small size: its few hundred requests (fewer on a busy
      // machine) make a share too coarse, so what must hold is that a stream failed only on a
      // seller that was killed or frozen (bytes had reached the client, allowed), with a bar that
      // catches failures en masse.
      if (FULL) expect(summary.successShare).toBeGreaterThanOrEqual(0.995);
      else {
        const elsewhere = failures.filter((o) => !o.peer || !faulted.has(o.peer.toLowerCase()));
        expect(elsewhere.map((o) => `${o.cause} ${o.peer}: ${o.message}`)).toEqual([]);
        expect(summary.successShare).toBeGreaterThanOrEqual(0.9);
      }
      expect(money.disagreements).toEqual([]);
      if (FULL) {
        // Flat: the last third within 25 % (+ 16 MB of noise) of the first.
        for (const rss of [buyerRss, gatewayRss]) {
          expect(rss.last).toBeLessThanOrEqual(rss.first * 1.25 + 16 * 1024 * 1024);
        }
      }
    },
    Math.max(1_200_000, (SIZE.seconds + 900) * 1000),
  );
});
