/**
 * Property-based budget suite (fast-check): random bursts of requests — stream and not, random
 * prices per configuration, random max_tokens, costs at and beyond the reservation (the buyer caps
 * what it commits at `x-svc-max-cost-usd`), random key / member / workspace limits — over 1, 2 and
 * 3 gateways sharing one SQLite file or one PostgreSQL database, with a random kill -9 of a
 * gateway process mid-burst followed by a restart and recovery, and a random crash of the buyer
 * mid-burst (the stub's `crash`: connections cut, open records closed at what their streams
 * delivered, as the restarted buyer pays them; src/node/crashedBuyer.e2e.test.ts kills the real
 * buyer process). After every run:
 * spent <= limit on every key, member and workspace counter; counters = ledger; the ledger = the
 * sum of what the buyer committed per request (its request records); no reservation is left.
 * The figures are printed at the end (runs, requests, largest overspend, largest difference).
 */
import fc from 'fast-check';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../log/index.js';
import { parseUsd } from '../money/index.js';
import { waitFor } from '../testing/index.js';
import { recoverReservations } from './server/recoverReservations.js';
import { type Limits, NO_LIMITS, PERIODS } from './store/types.js';
import { startTestPostgres, type TestPostgres } from './testing/embeddedPostgres.js';
import { type GatewayProcess, startGatewayProcess } from './testing/gatewayProcess.js';
import { type Harness, startHarness } from './testing/harness.js';

const figures = {
  runs: 0,
  requests: 0,
  kills: 0,
  buyerKills: 0,
  cutByBuyerKills: 0,
  largestOverspend: 0n,
  largestDifference: 0n,
};
let counter = 0;
const unique = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

interface Burst {
  requests: Array<{ stream: boolean; maxTokens: number; gateway: number }>;
  costUsd: string;
  kill: boolean;
  killBuyer: boolean;
}

type LimitPair = { daily: bigint | null; total: bigint | null };
type RunRecord = { key: LimitPair; member: LimitPair; workspace: LimitPair; bursts: Burst[] };

const limitArb = fc.option(fc.bigInt({ min: 0n, max: 4_000n }), { nil: null, freq: 2 });
const limitsArb = fc.record({ daily: limitArb, total: limitArb });
const runArb = (gateways: number) =>
  fc.record({
    key: limitsArb,
    member: limitsArb,
    workspace: limitsArb,
    bursts: fc.array(
      fc.record({
        requests: fc.array(
          fc.record({
            stream: fc.boolean(),
            maxTokens: fc.integer({ min: 1, max: 400 }),
            gateway: fc.integer({ min: 0, max: gateways - 1 }),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        // From far below to far beyond any reservation: the buyer caps at x-svc-max-cost-usd.
        costUsd: fc.constantFrom('0.000001', '0.000090', '0.000400', '0.002000', '1.000000'),
        kill: fc.boolean(),
        killBuyer: fc.boolean(),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  });

function limitsOf(input: LimitPair): Partial<Limits> {
  return { ...NO_LIMITS, daily: input.daily, total: input.total };
}

async function send(url: string, secret: string, request: Burst['requests'][number]) {
  try {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'model-a',
        messages: [{ role: 'user', content: 'What does this cost?' }],
        max_tokens: request.maxTokens,
        stream: request.stream,
      }),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0; // the gateway was killed mid-request
  }
}

interface Cluster {
  h: Harness;
  processes: GatewayProcess[];
  databaseUrl?: string;
  urls(): string[];
}

async function startCluster(gateways: number, price: number, databaseUrl?: string) {
  const h = await startHarness({
    ...(databaseUrl ? { databaseUrl } : {}),
    buyer: {
      costUsd: '0.000100',
      streamChunks: 4,
      chunkDelayMs: 5,
      prices: { inputUsdPerMillion: price, outputUsdPerMillion: price * 4 },
    },
  });
  const start = () =>
    startGatewayProcess({
      dataDir: h.dataDir,
      buyerUrl: h.buyer.url,
      ...(databaseUrl ? { databaseUrl } : {}),
    });
  const processes = await Promise.all(Array.from({ length: gateways - 1 }, start));
  const cluster: Cluster & { restart(index: number): Promise<void> } = {
    h,
    processes,
    ...(databaseUrl ? { databaseUrl } : {}),
    urls: () => [h.gateway.url, ...processes.map((p) => p.url)],
    restart: async (index) => {
      processes[index] = await start();
    },
  };
  return cluster;
}

async function oneRun(
  cluster: Awaited<ReturnType<typeof startCluster>>,
  run: RunRecord,
): Promise<void> {
  const { h } = cluster;
  const now = Date.now();
  const workspace = await h.store.createWorkspace({
    id: unique('ws'),
    name: unique('team'),
    identity: unique('id'),
    createdAt: now,
  });
  const member = await h.store.createMember({
    id: unique('mem'),
    name: unique('ann'),
    orgRole: 'none',
    keyQuota: null,
    createdAt: now,
  });
  await h.store.addMembership(member.id, workspace.id, 'member');
  await h.store.setMemberLimits(member.id, limitsOf(run.member));
  await h.store.setWorkspaceLimits(workspace.id, limitsOf(run.workspace));
  const { key, secret } = await h.key({
    label: 'prop',
    workspace: workspace.name,
    member: member.name,
    limits: limitsOf(run.key),
  });
  h.buyer.records.clear();
  for (const burst of run.bursts) {
    h.buyer.options.costUsd = burst.costUsd;
    const urls = cluster.urls();
    let settledAll = false;
    const sent = Promise.all(burst.requests.map((r) => send(urls[r.gateway]!, secret, r)));
    void sent.then(() => {
      settledAll = true;
    });
    figures.requests += burst.requests.length;
    const buyerCrash = burst.killBuyer
      ? (async () => {
          // Crash while a stream is open at the buyer (or once every request is over).
          const open = () =>
            [...h.buyer.records.values()].some((r) => !r.completed && !r.errorCode);
          while (!open() && !settledAll) await new Promise((resolve) => setTimeout(resolve, 2));
          figures.buyerKills++;
          figures.cutByBuyerKills += await h.buyer.crash();
        })()
      : Promise.resolve();
    if (burst.kill && cluster.processes.length > 0) {
      // kill -9 a gateway process while its requests are in flight, then start it again.
      await new Promise((resolve) => setTimeout(resolve, 8));
      process.kill(cluster.processes[0]!.pid, 'SIGKILL');
      figures.kills++;
      await sent;
      await cluster.processes[0]!.stop();
      await cluster.restart(0);
    } else {
      await sent;
    }
    await buyerCrash;
  }
  // Requests still streaming to a killed gateway finish at the buyer; then recovery runs.
  await waitFor(
    async () =>
      [...h.buyer.records.values()].every((record) => record.completed || record.errorCode),
    10_000,
  );
  const buyer = new Pool(h.buyer.url);
  try {
    await recoverReservations({
      store: h.store,
      buyer,
      now: Date.now() + 1,
      staleAfterMs: 0,
      logger: silentLogger(),
    });
  } finally {
    await buyer.close();
  }
  expect(await h.store.listReservations(Date.now() + 1)).toEqual([]);

  const levels = [
    ['key', key.id, run.key],
    ['member', member.id, run.member],
    ['workspace', workspace.id, run.workspace],
  ] as const;
  for (const [level, id, limits] of levels) {
    const spend = await h.store.periodSpend(level, id, Date.now());
    for (const period of PERIODS) {
      const limit = limitsOf(limits)[period];
      if (limit === null || limit === undefined) continue;
      const over = spend[period] - limit;
      if (over > figures.largestOverspend) figures.largestOverspend = over;
      expect(spend[period]).toBeLessThanOrEqual(limit);
    }
  }
  const ledger = await h.store.ledgerTotal(key.id);
  expect((await h.store.periodSpend('key', key.id, Date.now())).total).toBe(ledger);
  // What the buyer committed for this run's requests (each record = one request's vouchers).
  let committed = 0n;
  for (const record of h.buyer.records.values()) committed += parseUsd(record.costUsd);
  const difference = ledger > committed ? ledger - committed : committed - ledger;
  if (difference > figures.largestDifference) figures.largestDifference = difference;
  expect(ledger).toBe(committed);
  figures.runs++;
}

/** Runs per configuration (SVC_PROPERTY_RUNS to explore longer). */
const RUNS = Number(process.env.SVC_PROPERTY_RUNS ?? 3);

/**
 * One fixed run after the random ones, so every configuration sees streams in flight when the
 * buyer crashes (random limits often refuse most requests).
 */
function crashRun(gateways: number): RunRecord {
  const roomy = { daily: null, total: 4_000n };
  const requests = Array.from({ length: 8 }, (_, i) => ({
    stream: i % 4 !== 3,
    maxTokens: 50 + i,
    gateway: i % gateways,
  }));
  return {
    key: roomy,
    member: roomy,
    workspace: roomy,
    bursts: [{ requests, costUsd: '0.000400', kill: gateways > 1, killBuyer: true }],
  };
}

/** Runs the property on a cluster of `gateways` gateways, then stops it. */
async function checkCluster(gateways: number, price: number, databaseUrl?: string) {
  const cluster = await startCluster(gateways, price, databaseUrl);
  try {
    await fc.assert(
      fc.asyncProperty(runArb(gateways), (run) => oneRun(cluster, run as RunRecord)),
      { numRuns: RUNS },
    );
    await oneRun(cluster, crashRun(gateways));
  } finally {
    for (const p of cluster.processes) await p.stop();
    await cluster.h.stop();
  }
}

describe('budget properties', () => {
  afterAll(() => {
    console.info(
      `budget properties: ${figures.runs} runs, ${figures.requests} requests, ${figures.kills} gateway kills, ${figures.buyerKills} buyer kills (${figures.cutByBuyerKills} requests cut), largest overspend ${figures.largestOverspend} µUSD, largest ledger-vs-buyer difference ${figures.largestDifference} µUSD`,
    );
  });

  for (const gateways of [1, 2, 3]) {
    it(`SQLite, ${gateways} gateway(s)`, () => checkCluster(gateways, 1 + gateways), 120_000);
  }

  describe('PostgreSQL', () => {
    let pg: TestPostgres;
    beforeAll(async () => {
      pg = await startTestPostgres();
    });
    afterAll(async () => {
      await pg?.stop();
    });
    for (const gateways of [1, 2, 3]) {
      it(
        `${gateways} gateway(s)`,
        async () =>
          checkCluster(gateways, 2 * gateways, await pg.createDatabase(`prop${gateways}`)),
        120_000,
      );
    }
  });
});
