/**
 * Audits (docs/guide/trust.md), on the in-process market (src/audit/testing/demoMarket.ts:
 * the real demo model, the real auditor and exact test, a buyer's own traffic of four kinds of
 * clients, virtual time):
 * - for each way of evading audits, the audits needed to fail the evader;
 * - how often honest sellers are flagged;
 * - what audits cost as a share of the buyer's own spend under the default config;
 * - whether a seller can tell audits from traffic: two classifiers trained on what a seller sees.
 * libp2p and HTTP are left out: they change neither verdicts, costs nor what a seller sees of a
 * request's body and headers.
 */

import {
  DemoMarket,
  type HonestWhen,
  type MarketSeller,
  seededRandom,
} from '../src/audit/testing/demoMarket.js';
import { EVADERS } from '../src/audit/testing/evaders.js';
import { SELLER_VIEW_PHRASES } from '../src/audit/testing/generatorVocabulary.js';
import { userTraffic } from '../src/audit/testing/userTraffic.js';
import { verdictOf } from '../src/audit/verdict.js';
import { defaultConfig } from '../src/config/index.js';
import { formatUsd } from '../src/money/index.js';
import { classify } from './auditClassifier.js';

const MODEL = 'svc-demo-smart';
/** Prices of the demo network's `svc-demo-smart` sellers (src/devnet/sellers.ts), and a cheap one. */
const HONEST: MarketSeller[] = [
  { label: 'h1', pricing: { inputUsdPerMillion: 3, outputUsdPerMillion: 15 } },
  { label: 'h2', pricing: { inputUsdPerMillion: 2.5, outputUsdPerMillion: 12 } },
  { label: 'h3', pricing: { inputUsdPerMillion: 3.3, outputUsdPerMillion: 16.5 } },
];
const CHEAP = { inputUsdPerMillion: 0.6, outputUsdPerMillion: 3 };

/** A seller that knows svc's generator: honest when a prompt uses its vocabulary (a limit). */
const knowsGenerator: HonestWhen = (view) => {
  const text = new TextDecoder().decode(view.body);
  return SELLER_VIEW_PHRASES.some((phrase) => text.includes(phrase));
};

const EVASIONS: Record<string, HonestWhen | undefined> = {
  'none (plain substitute)': undefined,
  ...EVADERS,
  'generator vocabulary (known limit)': knowsGenerator,
  'sees the probe flag (control)': (view) => view.probe,
};

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Audits of the evader until it is failed (at most 40), over `trials` markets. */
async function evasion(name: string, honestWhen: HonestWhen | undefined, trials: number) {
  const audits: number[] = [];
  let failed = 0;
  let userHonest = 0;
  let users = 0;
  let probesHonest = 0;
  let probes = 0;
  for (let trial = 0; trial < trials; trial++) {
    const market = new DemoMarket({
      model: MODEL,
      seed: 1000 + trial,
      sellers: [
        ...HONEST,
        {
          label: 'x',
          pricing: CHEAP,
          substitute: 'svc-demo-fast',
          ...(honestWhen ? { honestWhen } : {}),
        },
      ],
    });
    const traffic = userTraffic(1_000, seededRandom(2000 + trial));
    for (let from = 0; from < traffic.length; from += 10) {
      await market.run('x', traffic.slice(from, from + 10), traffic[from + 10]?.at);
      const tally = market.tally.get(market.peerId('x'));
      if (market.verdict('x')?.verdict === 'failed' || (tally?.probes ?? 0) >= 40) break;
    }
    await market.drain();
    const tally = market.tally.get(market.peerId('x'))!;
    const isFailed = market.verdict('x')?.verdict === 'failed';
    if (isFailed) failed++;
    audits.push(isFailed ? tally.probes : Number.POSITIVE_INFINITY);
    userHonest += tally.userHonest;
    users += tally.userRequests;
    probesHonest += tally.probesHonest;
    probes += tally.probes;
    market.close();
  }
  const caught = audits.filter(Number.isFinite);
  return {
    evasion: name,
    trials,
    failed,
    failedWithin20: audits.filter((n) => n <= 20).length,
    auditsToFail: caught.length > 0 ? { median: median(caught), max: Math.max(...caught) } : null,
    honestShare: {
      users: users === 0 ? 0 : userHonest / users,
      audits: probes === 0 ? 0 : probesHonest / probes,
    },
  };
}

/** Honest markets until `audits` probes each; every window any seller's verdict rested on. */
async function falsePositives(runs: number, audits: number) {
  let windows = 0;
  let flagged = 0;
  let worstP = 1;
  for (let run = 0; run < runs; run++) {
    const market = new DemoMarket({
      model: MODEL,
      seed: 50 + run,
      sellers: [...HONEST, { label: 'x', pricing: CHEAP }],
    });
    const traffic = userTraffic(audits * 8, seededRandom(60 + run));
    for (let from = 0; from < traffic.length && market.probes.length < audits; from += 100) {
      await market.run('x', traffic.slice(from, from + 100), traffic[from + 100]?.at);
    }
    await market.drain();
    for (const label of ['h1', 'h2', 'h3', 'x']) {
      const peerId = market.peerId(label);
      const mine = market.probes.filter((probe) => probe.answers.some((a) => a.peerId === peerId));
      for (let end = 1; end <= mine.length; end++) {
        const standing = verdictOf(peerId, mine.slice(0, end))!;
        windows++;
        worstP = Math.min(worstP, standing.pValue);
        if (standing.verdict !== 'pass') flagged++;
      }
    }
    market.close();
  }
  return {
    runs,
    auditsPerRun: audits,
    verdictsChecked: windows,
    flagged,
    rate: flagged / windows,
    lowestP: worstP,
  };
}

/**
 * Days of the buyer's own traffic under the default audit config, served by `x` at `pricing`
 * (references at the demo network's prices): audits' share of spend, and requests per probe.
 */
async function costShare(requests: number, pricing: MarketSeller['pricing']) {
  const config = defaultConfig().buyer.audit;
  const market = new DemoMarket({
    model: MODEL,
    seed: 7,
    config,
    sellers: [...HONEST, { label: 'x', ...(pricing ? { pricing } : {}) }],
  });
  const traffic = userTraffic(requests, seededRandom(8));
  await market.run('x', traffic);
  const share = Number((market.spend.audit * 1_000_000n) / (market.spend.own || 1n)) / 1e6;
  const days = Math.ceil(traffic.at(-1)!.at / 86_400_000);
  const result = {
    config,
    requests,
    days,
    probes: market.probes.length,
    requestsPerProbe: market.probes.length > 0 ? Math.round(requests / market.probes.length) : null,
    ownSpendUsd: formatUsd(market.spend.own),
    auditSpendUsd: formatUsd(market.spend.audit),
    auditShareOfSpend: share,
    withinTwoPercent: share <= 0.02,
  };
  market.close();
  return result;
}

/** Classifiers on one seller's view of a day of traffic with audits after every answer. */
async function indistinguishability(seeds: number[]) {
  const out = [];
  for (const seed of seeds) {
    const market = new DemoMarket({
      model: MODEL,
      seed,
      sellers: [...HONEST, { label: 'x', pricing: CHEAP }],
    });
    await market.run('x', userTraffic(3_000, seededRandom(seed + 1)));
    const views = market.views.get(market.peerId('x'))!;
    out.push({
      seed,
      shapeAndTiming: classify(views, seededRandom(seed + 2), { shapeOnly: true }),
      withTextStatistics: classify(views, seededRandom(seed + 2)),
    });
    market.close();
  }
  return out;
}

const percent = (x: number) => `${(x * 100).toFixed(1)} %`;

export default async function bench(): Promise<Record<string, unknown>> {
  const evasions = [];
  console.log(
    'evasion                                  failed  within 20  audits to fail (median, max)  honest on users / audits',
  );
  for (const [name, rule] of Object.entries(EVASIONS)) {
    const result = await evasion(name, rule, 6);
    evasions.push(result);
    const audits = result.auditsToFail
      ? `${result.auditsToFail.median}, ${result.auditsToFail.max}`
      : '-';
    console.log(
      `${name.padEnd(40)} ${`${result.failed}/${result.trials}`.padStart(6)}  ${`${result.failedWithin20}/${result.trials}`.padStart(9)}  ${audits.padStart(28)}  ${percent(result.honestShare.users).padStart(8)} / ${percent(result.honestShare.audits)}`,
    );
  }
  const fp = await falsePositives(3, 1_000);
  console.log(
    `false positives: ${fp.flagged} of ${fp.verdictsChecked} verdicts of honest sellers flagged over ${fp.runs} runs of ${fp.auditsPerRun} audits (rate ${fp.rate}); lowest p ${fp.lowestP.toExponential(2)}`,
  );
  const cost = {
    cheapSeller: await costShare(20_000, CHEAP),
    pricedLikeOthers: await costShare(20_000, { inputUsdPerMillion: 2.4, outputUsdPerMillion: 12 }),
  };
  for (const [name, day] of Object.entries(cost)) {
    console.log(
      `cost (default config, ${name}): ${day.requests} requests over ${day.days} days, own ${day.ownSpendUsd} USD, audits ${day.auditSpendUsd} USD in ${day.probes} probes (one per ${day.requestsPerProbe} requests) = ${percent(day.auditShareOfSpend)} of spend`,
    );
  }
  const classifiers = await indistinguishability([3, 13]);
  for (const run of classifiers) {
    console.log(
      `classifier (seed ${run.seed}, ${run.shapeAndTiming.probes} audits, ${run.shapeAndTiming.userRequests} user requests): shape, parameters, headers, timing: logistic ${percent(run.shapeAndTiming.logisticRegression.accuracy)}, boosted stumps ${percent(run.shapeAndTiming.boostedStumps.accuracy)}; with text statistics: logistic ${percent(run.withTextStatistics.logisticRegression.accuracy)}, boosted stumps ${percent(run.withTextStatistics.boostedStumps.accuracy)}`,
    );
  }
  return { evasions, falsePositives: fp, cost, classifiers };
}
