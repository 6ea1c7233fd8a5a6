/**
 * Property-based budget suite (fast-check): random bursts of requests — stream and not, random
 * prices per configuration, random max_tokens, costs at and beyond the reservation (the buyer caps
 * what it commits at `x-svc-max-cost-usd`), random key / member / workspace limits — over 1, 2 and
 * 3 gateways sharing one SQLite file or one PostgreSQL database, with a random kill -9 of a
 * gateway process mid-burst followed by a restart and recovery, and a random crash of the buyer
 * mid-burst (the stub's `crash`: connections cut, open records closed at what their streams
 * delivered, as the restarted buyer pays them; src/node/crashedBuyer.e2e.test.ts kills the real
 * buyer process). After every burst: requests are served (when every level had room for one
 * more reservation than the killed gateway could hold, at least one reached the buyer), and a
 * buyer crash cut the streams it found open (at least one when a stream had reached the buyer;
 * streams are held open in those bursts so the crash finds them) and every request it cut was
 * seen cut by its client. After every run: spent <= limit on every key, member and workspace
 * counter; counters = ledger; the ledger = the sum of what the buyer committed per request (its
 * request records); no reservation is left. The figures are printed at the end (runs, requests,
 * served, cut, largest overspend, largest difference). `npm run test:soak` runs 50 random runs
 * per configuration (SVC_PROPERTY_RUNS=50) instead of `npm test`'s 3.
 */
import fc from 'fast-check';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../log/index.js';
import { type MicroUsd, parseUsd, toPriceMicro } from '../money/index.js';
import { waitFor } from '../testing/index.js';
import { requestMaxCostBound } from './budget/requestMaxCost.js';
import { recoverReservations } from './server/recoverReservations.js';
import { type Limits, NO_LIMITS, PERIODS } from './store/types.js';
import { startTestPostgres, type TestPostgres } from './testing/embeddedPostgres.js';
import { type GatewayProcess, startGatewayProcess } from './testing/gatewayProcess.js';
import { type Harness, startHarness } from './testing/harness.js';

const figures = {
  runs: 0,
  requests: 0,
  served: 0,
  seenCut: 0,
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

const PATH = '/v1/chat/completions';
const bodyOf = (request: Burst['requests'][number]) => ({
  model: 'model-a',
  messages: [{ role: 'user', content: 'What does this cost?' }],
  max_tokens: request.maxTokens,
  stream: request.stream,
});

/** How a request ended for its client: its status (0: no answer) and whether it was cut. */
interface Sent {
  status: number;
  /** An answer that began (200) and did not end whole: a stream cut, or a body cut short. */
  cut: boolean;
}

async function send(url: string, secret: string, request: Burst['requests'][number]) {
  let status = 0;
  try {
    const response = await fetch(`${url}${PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(bodyOf(request)),
    });
    status = response.status;
    const text = await response.text();
    // A stream the gateway relayed whole ends with the buyer's usage comment.
    const cut = request.stream && status === 200 && !text.includes(': svc-usage');
    return { status, cut } satisfies Sent;
  } catch {
    // The gateway was killed mid-request, or the answer was cut mid-body.
    return { status, cut: status === 200 } satisfies Sent;
  }
}

interface Cluster {
  h: Harness;
  processes: GatewayProcess[];
  price: ReturnType<typeof toPriceMicro>;
  databaseUrl?: string;
  urls(): string[];
}

async function startCluster(gateways: number, price: number, databaseUrl?: string) {
  const prices = { inputUsdPerMillion: price, outputUsdPerMillion: price * 4 };
  const h = await startHarness({
    ...(databaseUrl ? { databaseUrl } : {}),
    buyer: { costUsd: '0.000100', streamChunks: 4, chunkDelayMs: 5, prices },
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
    price: toPriceMicro(prices),
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
  const levels = [
    ['key', key.id, run.key],
    ['member', member.id, run.member],
    ['workspace', workspace.id, run.workspace],
  ] as const;
  for (const burst of run.bursts) {
    h.buyer.options.costUsd = burst.costUsd;
    // Streams wait after their first chunk until the crash: it always finds them open.
    h.buyer.options.holdStreams = burst.killBuyer;
    const urls = cluster.urls();
    const killing = burst.kill && cluster.processes.length > 0;
    const room = await roomLeft(h, key.id, levels);
    let largest = 0n;
    for (const r of burst.requests) {
      const bound = requestMaxCostBound(PATH, bodyOf(r), cluster.price)!;
      if (bound > largest) largest = bound;
    }
    // Requests to the gateway killed mid-burst may hold their reservations until recovery.
    const atRisk = killing ? burst.requests.filter((r) => r.gateway === 1).length : 0;
    const before = new Set(h.buyer.records.keys());
    let settledAll = false;
    const sent = Promise.all(burst.requests.map((r) => send(urls[r.gateway]!, secret, r)));
    void sent.then(() => {
      settledAll = true;
    });
    figures.requests += burst.requests.length;
    let cut = 0;
    const buyerCrash = burst.killBuyer
      ? (async () => {
          // Crash while a stream is open at the buyer (or once every request is over).
          const open = () =>
            [...h.buyer.records.values()].some((r) => !r.completed && !r.errorCode);
          while (!open() && !settledAll) await new Promise((resolve) => setTimeout(resolve, 2));
          figures.buyerKills++;
          cut = await h.buyer.crash();
          h.buyer.options.holdStreams = false;
          figures.cutByBuyerKills += cut;
        })()
      : Promise.resolve();
    let results: Sent[];
    if (killing) {
      // kill -9 a gateway process while its requests are in flight, then start it again.
      await new Promise((resolve) => setTimeout(resolve, 8));
      process.kill(cluster.processes[0]!.pid, 'SIGKILL');
      figures.kills++;
      results = await sent;
      await cluster.processes[0]!.stop();
      await cluster.restart(0);
    } else {
      results = await sent;
    }
    await buyerCrash;
    h.buyer.options.holdStreams = false;
    const fresh = [...h.buyer.records.values()].filter((r) => !before.has(r.requestId));
    figures.served += results.filter((r) => r.status === 200).length;
    // Served: with room for one more reservation than the killed gateway could hold, at least
    // one request reached the buyer (a gateway refusing everything fails here).
    if (room === null || room >= largest * BigInt(atRisk + 1)) {
      expect(fresh.length).toBeGreaterThan(0);
    }
    if (burst.killBuyer) {
      // The crash cut the streams that reached the buyer, and their clients saw them cut.
      if (fresh.some((r) => r.streamed)) expect(cut).toBeGreaterThan(0);
      const seenCut = results.filter((r) => r.cut || r.status === 0 || r.status >= 500).length;
      figures.seenCut += seenCut;
      expect(seenCut).toBeGreaterThanOrEqual(cut);
    }
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

/**
 * The least room left on the run's limited counters (limit minus spend minus reservations still
 * held by a killed gateway), or null when nothing is limited.
 */
async function roomLeft(
  h: Harness,
  keyId: string,
  levels: ReadonlyArray<readonly ['key' | 'member' | 'workspace', string, LimitPair]>,
): Promise<MicroUsd | null> {
  const now = Date.now();
  const held = (await h.store.listReservations(now + 1))
    .filter((r) => r.keyId === keyId)
    .reduce((sum, r) => sum + r.amountMicro, 0n);
  let least: MicroUsd | null = null;
  for (const [level, id, limits] of levels) {
    const spend = await h.store.periodSpend(level, id, now);
    for (const period of PERIODS) {
      const limit = limitsOf(limits)[period];
      if (limit === null || limit === undefined) continue;
      const left = limit - spend[period] - held;
      if (least === null || left < least) least = left;
    }
  }
  return least;
}

/** Runs per configuration (SVC_PROPERTY_RUNS to explore longer). */
const RUNS = Number(process.env.SVC_PROPERTY_RUNS ?? 3);
/** Time per configuration: up to 40 s a run on a loaded machine, 5 minutes at least. */
const TIMEOUT_MS = Math.max(300_000, (RUNS + 1) * 40_000);

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
      `budget properties: ${figures.runs} runs, ${figures.requests} requests (${figures.served} served), ${figures.kills} gateway kills, ${figures.buyerKills} buyer kills (${figures.cutByBuyerKills} requests cut, ${figures.seenCut} seen cut or failed by clients), largest overspend ${figures.largestOverspend} µUSD, largest ledger-vs-buyer difference ${figures.largestDifference} µUSD`,
    );
  });

  for (const gateways of [1, 2, 3]) {
    it(`SQLite, ${gateways} gateway(s)`, () => checkCluster(gateways, 1 + gateways), TIMEOUT_MS);
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
        TIMEOUT_MS,
      );
    }
  });
});
