/**
 * Audits (README "Trust and audits"): how many audits flag a seller serving another model, how
 * often honest sellers are flagged, and what audits cost as a share of the buyer's own spend
 * under the default `buyer.audit` config. The real auditor and the real demo model run in
 * process (src/audit/testing/demoMarket.ts); libp2p and HTTP are left out, as they change
 * neither the verdicts nor the costs.
 */
import type { Auditor } from '../src/audit/index.js';
import {
  type DemoMarket,
  demoMarket,
  type MarketSeller,
  marketAuditor,
  OPEN_AUDITS,
} from '../src/audit/testing/demoMarket.js';
import { normalizeModelName } from '../src/catalog/index.js';
import { type AuditConfig, defaultConfig } from '../src/config/index.js';
import { costOfUsage, formatUsd, toPriceMicro } from '../src/money/index.js';
import { removeTempDir, tempDir } from '../src/testing/index.js';

const MODEL = 'svc-demo-smart';
const KEY = normalizeModelName(MODEL);
const OPEN = OPEN_AUDITS;
/** Prices of the demo network's `svc-demo-smart` sellers (src/devnet/sellers.ts). */
const PRICES = [
  { inputUsdPerMillion: 3, outputUsdPerMillion: 15 },
  { inputUsdPerMillion: 2.5, outputUsdPerMillion: 12 },
  { inputUsdPerMillion: 3.3, outputUsdPerMillion: 16.5 },
  { inputUsdPerMillion: 2.75, outputUsdPerMillion: 13.2 },
];

function withAuditor<T>(
  market: DemoMarket,
  config: AuditConfig,
  seed: number,
  run: (auditor: Auditor) => Promise<T>,
): Promise<T> {
  const dir = tempDir('svc-audit-bench-');
  const auditor = marketAuditor(market, config, dir, seed);
  return run(auditor).finally(async () => {
    await auditor.stop();
    removeTempDir(dir);
  });
}

const honest = (label: string, index = 0): MarketSeller => ({
  label,
  weights: MODEL,
  pricing: PRICES[index % PRICES.length]!,
});

/** Audits of a substitute until it is failed (at most 20), over `trials` markets. */
async function detection(trials: number) {
  const toSuspect: number[] = [];
  const toFail: number[] = [];
  for (let trial = 0; trial < trials; trial++) {
    const market = demoMarket(MODEL, [
      honest('h1', 0),
      honest('h2', 1),
      honest('h3', 2),
      {
        label: 'sub',
        weights: 'svc-demo-fast',
        pricing: { inputUsdPerMillion: 0.5, outputUsdPerMillion: 2 },
      },
    ]);
    await withAuditor(market, OPEN, 1000 + trial, async (auditor) => {
      const sub = market.peerId('sub');
      let audits = 0;
      while (audits < 20 && auditor.audit(sub, KEY)?.verdict !== 'failed') {
        auditor.noteAnswer(sub, KEY, 1_000_000n);
        await auditor.idle();
        audits++;
        if (auditor.audit(sub, KEY)?.verdict === 'suspect' && toSuspect.length === trial) {
          toSuspect.push(audits);
        }
      }
      toFail.push(
        auditor.audit(sub, KEY)?.verdict === 'failed' ? audits : Number.POSITIVE_INFINITY,
      );
    });
  }
  return {
    trials,
    auditsToSuspect: { mean: mean(toSuspect), max: Math.max(...toSuspect) },
    auditsToFail: { mean: mean(toFail), max: Math.max(...toFail) },
    failedWithin20: toFail.filter((n) => n <= 20).length,
  };
}

/** `audits` audits of honest sellers with unseeded sampled answers; audits after which the audited seller was not `pass`. */
async function falsePositives(audits: number) {
  const labels = ['h1', 'h2', 'h3', 'h4'];
  const market = demoMarket(
    MODEL,
    labels.map((label, i) => honest(label, i)),
  );
  return withAuditor(market, OPEN, 99, async (auditor) => {
    let flagged = 0;
    for (let i = 0; i < audits; i++) {
      const label = labels[i % labels.length]!;
      auditor.noteAnswer(market.peerId(label), KEY, 1_000_000n);
      await auditor.idle();
      if (auditor.audit(market.peerId(label), KEY)?.verdict !== 'pass') flagged++;
    }
    return {
      audits,
      flaggedAudits: flagged,
      falsePositiveRate: flagged / audits,
      verdicts: Object.fromEntries(labels.map((l) => [l, auditor.audit(market.peerId(l), KEY)])),
    };
  });
}

/** A day of `requests` answers of `input`/`output` tokens under the default audit config. */
async function costShare(requests: number, input: number, output: number) {
  const config = defaultConfig().buyer.audit;
  const labels = ['h1', 'h2', 'h3', 'h4'];
  const market = demoMarket(
    MODEL,
    labels.map((label, i) => honest(label, i)),
  );
  return withAuditor(market, config, 5, async (auditor) => {
    let own = 0n;
    for (let i = 0; i < requests; i++) {
      const seller = i % labels.length;
      const cost = costOfUsage(
        { inputTokens: input, cachedInputTokens: 0, outputTokens: output },
        toPriceMicro(PRICES[seller]!),
      );
      own += cost;
      auditor.noteAnswer(market.peerId(labels[seller]!), KEY, cost);
      await auditor.idle();
    }
    const share = Number((market.stats.costMicro * 1_000_000n) / (own === 0n ? 1n : own)) / 1e6;
    return {
      config,
      requests,
      tokensPerAnswer: { input, output },
      ownSpendUsd: formatUsd(own),
      auditSpendUsd: formatUsd(market.stats.costMicro),
      auditRequests: market.stats.requests,
      auditShareOfSpend: share,
      withinTwoPercent: share <= 0.02,
    };
  });
}

const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / Math.max(1, xs.length);

export default async function bench(): Promise<Record<string, unknown>> {
  const detect = await detection(20);
  console.log(
    `detection: substitute failed within 20 audits in ${detect.failedWithin20}/${detect.trials} trials; audits to fail mean ${detect.auditsToFail.mean}, max ${detect.auditsToFail.max} (to suspect: mean ${detect.auditsToSuspect.mean})`,
  );
  const fp = await falsePositives(1000);
  console.log(
    `false positives: ${fp.flaggedAudits} of ${fp.audits} honest audits flagged (rate ${fp.falsePositiveRate})`,
  );
  const agentDay = await costShare(2000, 3000, 600);
  const smallDay = await costShare(2000, 200, 100);
  for (const day of [agentDay, smallDay]) {
    console.log(
      `cost: ${day.requests} answers of ${day.tokensPerAnswer.input}/${day.tokensPerAnswer.output} tokens, own ${day.ownSpendUsd} USD, audits ${day.auditSpendUsd} USD in ${day.auditRequests} requests = ${(day.auditShareOfSpend * 100).toFixed(2)} % of spend`,
    );
  }
  return { detection: detect, falsePositives: fp, cost: { agentDay, smallDay } };
}
