/**
 * The red-team suite (docs/guide/trust.md): sellers that have read svc's code and answer
 * honestly only what looks like an audit by one tell each (src/audit/testing/evaders.ts), in a
 * market of honest sellers of the same model, under a buyer's own traffic of four kinds of
 * clients (src/audit/testing/userTraffic.ts). The real auditor, demo model and exact test run;
 * time is virtual. Each evader must end `failed` within 20 audits of it; honest sellers must
 * never be flagged in 1,000 audits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditConfig } from '../config/index.js';
import { DemoMarket, OPEN_AUDITS, seededRandom } from './testing/demoMarket.js';
import { EVADERS, rememberingLengths } from './testing/evaders.js';
import { userTraffic } from './testing/userTraffic.js';
import { verdictOf } from './verdict.js';

const MODEL = 'svc-demo-smart';
const markets: DemoMarket[] = [];
afterEach(() => {
  for (const market of markets.splice(0)) market.close();
});

function market(seed: number, evader?: string) {
  const sellers = [
    { label: 'h1', pricing: { inputUsdPerMillion: 3, outputUsdPerMillion: 15 } },
    { label: 'h2', pricing: { inputUsdPerMillion: 2.5, outputUsdPerMillion: 12 } },
    { label: 'h3', pricing: { inputUsdPerMillion: 3.3, outputUsdPerMillion: 16.5 } },
    {
      label: 'x',
      pricing: { inputUsdPerMillion: 0.6, outputUsdPerMillion: 3 },
      ...(evader ? { substitute: 'svc-demo-fast', honestWhen: EVADERS[evader]! } : {}),
    },
  ];
  const created = new DemoMarket({ model: MODEL, sellers, seed });
  markets.push(created);
  return created;
}

/**
 * Every window each seller's verdict ever rested on, probe by probe, is `pass`; the lowest
 * p-value of any of them.
 */
function neverFlagged(created: DemoMarket, labels: readonly string[]): number {
  let worst = 1;
  for (const label of labels) {
    const peerId = created.peerId(label);
    const mine = created.probes.filter((probe) => probe.answers.some((a) => a.peerId === peerId));
    for (let end = 1; end <= mine.length; end++) {
      const standing = verdictOf(peerId, mine.slice(0, end));
      worst = Math.min(worst, standing!.pValue);
      expect(standing!.verdict).toBe('pass');
    }
  }
  return worst;
}

/** Runs the buyer's traffic (served by `x`) in steps until `x` is failed or traffic ends. */
async function runUntilFailed(created: DemoMarket, requests: number, seed: number) {
  const traffic = userTraffic(requests, seededRandom(seed));
  for (let from = 0; from < traffic.length; from += 10) {
    await created.run('x', traffic.slice(from, from + 10), traffic[from + 10]?.at);
    if (created.verdict('x')?.verdict === 'failed') break;
  }
  await created.drain();
}

describe('red team: sellers that evade audits by one tell each', () => {
  for (const [name, index] of Object.keys(EVADERS).map((key, at) => [key, at] as const)) {
    it(`${name}: failed within 20 audits, and it substituted the buyer's own answers until then`, async () => {
      const created = market(100 + index, name);
      await runUntilFailed(created, 600, 200 + index);
      const standing = created.verdict('x');
      const tally = created.tally.get(created.peerId('x'))!;
      expect(standing?.verdict).toBe('failed');
      expect(standing!.pValue).toBeLessThanOrEqual(1e-6);
      // Audits of x: every probe it answered (as the audited seller or as a reference).
      expect(tally.probes).toBeLessThanOrEqual(20);
      // It was a real substitute for the buyer's own traffic, not an honest seller.
      expect(tally.userHonest).toBeLessThan(tally.userRequests);
      // The honest references were not flagged along the way.
      for (const label of ['h1', 'h2', 'h3']) expect(created.verdict(label)?.verdict).toBe('pass');
    });
  }
});

/**
 * A seller that cannot pass audits gets the honest sellers flagged instead: fresh keys of its own
 * announce the model and serve its cheaper one (nothing on chain: no trust), and, picked as
 * references, are the majority an honest seller is the odd one of
 * (docs/decisions/219-references-the-buyer-trusts.md).
 */
describe('red team: a seller’s own keys as references', () => {
  const SYBILS = Array.from({ length: 12 }, (_, i) => `s${i + 1}`);
  function sybilMarket(trusted?: string[]) {
    const created = new DemoMarket({
      model: MODEL,
      seed: 31,
      sellers: [
        { label: 'h1' },
        { label: 'h2' },
        { label: 'h3' },
        ...SYBILS.map((label) => ({ label, substitute: 'svc-demo-fast' })),
      ],
      ...(trusted ? { trusted } : {}),
    });
    markets.push(created);
    return created;
  }
  const probesOf = (created: DemoMarket, label: string) =>
    created.tally.get(created.peerId(label))?.probes ?? 0;

  it('only sellers the buyer trusts are references: the untrusted keys are never asked, and the honest seller passes', async () => {
    const created = sybilMarket(['h1', 'h2', 'h3']);
    await created.run('h1', userTraffic(200, seededRandom(32)));
    const standing = created.verdict('h1')!;
    expect(standing.audits).toBeGreaterThanOrEqual(24);
    expect(standing.verdict).toBe('pass');
    for (const label of SYBILS) expect(probesOf(created, label)).toBe(0);
  });

  it('the control: with every seller a reference, the untrusted keys get the honest seller flagged', async () => {
    const created = sybilMarket();
    await created.run('h1', userTraffic(200, seededRandom(32)));
    expect(SYBILS.some((label) => probesOf(created, label) > 0)).toBe(true);
    // Suspect at least: its effective reputation halved, or failed and ranked last.
    expect(created.verdict('h1')?.verdict).not.toBe('pass');
    expect(created.verdict('h1')!.pValue).toBeLessThanOrEqual(1e-5);
  });
});

/** A market where `x` remembers the lengths of what it served (src/audit/testing/evaders.ts). */
function rememberingMarket(config?: AuditConfig) {
  const created = new DemoMarket({
    model: MODEL,
    seed: 100,
    sellers: [
      { label: 'h1' },
      { label: 'h2' },
      { label: 'h3' },
      { label: 'x', substitute: 'svc-demo-fast', honestWhen: rememberingLengths() },
    ],
    ...(config ? { config } : {}),
  });
  markets.push(created);
  return created;
}

describe('red team: the open limits of probes (docs/guide/trust.md), with audits of real answers off', () => {
  it('a seller that remembers the lengths of what it served answers the probes copied from it honestly, substitutes the rest, and passes', async () => {
    const created = rememberingMarket();
    await runUntilFailed(created, 600, 200);
    const tally = created.tally.get(created.peerId('x'))!;
    // Every probe was copied from a request x served, with every text exactly as long.
    expect(tally.probes).toBeGreaterThanOrEqual(100);
    expect(tally.probesHonest).toBe(tally.probes);
    // The buyer's own requests with the lengths of an earlier one are few: x substituted the rest.
    expect(tally.userHonest * 5).toBeLessThan(tally.userRequests);
    expect(created.verdict('x')?.verdict).toBe('pass');
  });
});

/**
 * Audits of real answers (docs/decisions/221-audits-of-real-answers.md): the audited answer is
 * one the seller gave a real request, before anyone chose to audit it.
 */
describe('red team: audits of real answers (buyer.audit.realAnswers on)', () => {
  const REAL = { ...OPEN_AUDITS, realAnswers: true };

  it('fails the seller that remembers the lengths of what it served, on its answers to the buyer’s own requests', async () => {
    const created = rememberingMarket(REAL);
    await runUntilFailed(created, 600, 200);
    const standing = created.verdict('x')!;
    expect(standing.verdict).toBe('failed');
    expect(standing.pValue).toBeLessThanOrEqual(1e-6);
    expect(standing.audits).toBeLessThanOrEqual(20);
    // Every audit of x was a replay of a request it had served: it never received a probe.
    expect(standing.probes.every((probe) => probe.id.startsWith('replay_'))).toBe(true);
    const tally = created.tally.get(created.peerId('x'))!;
    expect(tally.probes).toBe(0);
    expect(tally.userHonest).toBeLessThan(tally.userRequests);
    for (const label of ['h1', 'h2', 'h3']) expect(created.verdict(label)?.verdict).toBe('pass');
  });

  it('never flags honest sellers', async () => {
    const created = new DemoMarket({
      model: MODEL,
      seed: 13,
      sellers: [{ label: 'h1' }, { label: 'h2' }, { label: 'h3' }, { label: 'x' }],
      config: REAL,
    });
    markets.push(created);
    const traffic = userTraffic(1_500, seededRandom(14));
    for (let from = 0; from < traffic.length && created.probes.length < 200; from += 100) {
      await created.run('x', traffic.slice(from, from + 100), traffic[from + 100]?.at);
    }
    await created.drain();
    expect(created.probes.length).toBeGreaterThanOrEqual(200);
    expect(created.probes.every((probe) => probe.id.startsWith('replay_'))).toBe(true);
    expect(neverFlagged(created, ['h1', 'h2', 'h3', 'x'])).toBeGreaterThan(1e-5);
  }, 120_000);
});

describe('red team: the controls', () => {
  it('a seller that could tell audits from traffic would pass them: the suite catches only what audits can see', async () => {
    const oracle = new DemoMarket({
      model: MODEL,
      seed: 8,
      sellers: [
        { label: 'h1' },
        { label: 'h2' },
        { label: 'h3' },
        { label: 'x', substitute: 'svc-demo-fast', honestWhen: (view) => view.probe },
      ],
    });
    markets.push(oracle);
    await oracle.run('x', userTraffic(300, seededRandom(9)));
    const tally = oracle.tally.get(oracle.peerId('x'))!;
    expect(tally.probes).toBeGreaterThanOrEqual(20);
    expect(tally.userHonest).toBe(0);
    expect(oracle.verdict('x')?.verdict).toBe('pass');
  });

  it('honest sellers are never flagged in 1,000 audits', async () => {
    const created = new DemoMarket({
      model: MODEL,
      seed: 11,
      sellers: [{ label: 'h1' }, { label: 'h2' }, { label: 'h3' }, { label: 'x' }],
    });
    markets.push(created);
    const traffic = userTraffic(6_000, seededRandom(12));
    for (let from = 0; from < traffic.length && created.probes.length < 1_000; from += 100) {
      await created.run('x', traffic.slice(from, from + 100), traffic[from + 100]?.at);
    }
    await created.drain();
    expect(created.probes.length).toBeGreaterThanOrEqual(1_000);
    expect(neverFlagged(created, ['h1', 'h2', 'h3', 'x'])).toBeGreaterThan(1e-5);
  }, 300_000);
});
