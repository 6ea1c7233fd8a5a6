/**
 * The auditor at the statistics level: the real demo model answers in process (no libp2p, no
 * HTTP; src/audit/audits.e2e.test.ts covers the network), the real auditor judges, a real
 * store keeps verdicts in a temporary data dir.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { normalizeModelName } from '../catalog/index.js';
import type { AuditConfig } from '../config/index.js';
import { removeTempDir, tempDir } from '../testing/index.js';
import type { Auditor } from './auditor.js';
import { AuditStore } from './store.js';
import {
  type DemoMarket,
  demoMarket,
  type MarketSeller,
  marketAuditor,
  OPEN_AUDITS,
  seededRandom,
} from './testing/demoMarket.js';

const MODEL = 'svc-demo-smart';
const KEY = normalizeModelName(MODEL);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeTempDir(dir);
});

const OPEN = OPEN_AUDITS;

function auditorFor(market: DemoMarket, config: AuditConfig = OPEN) {
  const dir = tempDir('svc-audit-');
  dirs.push(dir);
  return { auditor: marketAuditor(market, config, dir, 7), dir };
}

/** One audit of `label`: a delivered answer costing 1 USD, then wait for the audit. */
async function auditOnce(auditor: Auditor, market: DemoMarket, label: string) {
  auditor.noteAnswer(market.peerId(label), KEY, 1_000_000n);
  await auditor.idle();
}

const honest = (label: string): MarketSeller => ({ label, weights: MODEL });

describe('auditor', () => {
  it('flags a seller serving another model within 20 audits, and passes the honest ones', async () => {
    const market = demoMarket(MODEL, [
      honest('h1'),
      honest('h2'),
      honest('h3'),
      { label: 'sub', weights: 'svc-demo-fast' },
    ]);
    const { auditor } = auditorFor(market);
    let audits = 0;
    while (auditor.audit(market.peerId('sub'), KEY)?.verdict !== 'failed' && audits < 20) {
      await auditOnce(auditor, market, 'sub');
      audits++;
    }
    expect(auditor.audit(market.peerId('sub'), KEY)?.verdict).toBe('failed');
    expect(audits).toBeLessThanOrEqual(20);
    const standing = auditor.standing(market.peerId('sub'), KEY)!;
    expect(standing.evidence.outcome).toBe('disagree');
    expect(standing.evidence.prompts.length).toBeGreaterThan(0);
    expect(standing.evidence.answers[0]).toContain('Sampled:');
    // Spot check first (similarity and prefix), then the sampled test (statistic and p-value).
    expect(audits).toBe(2);
    expect(standing.evidence).toMatchObject({ kind: 'sampled', prefix: null });
    expect(standing.evidence.pValue).toBeLessThanOrEqual(0.005);
    expect(standing.evidence.statistic).toBeGreaterThan(0);
    // Failed sellers are left out of later audits: only honest sellers are compared.

    for (let i = 0; i < 4; i++) {
      await auditOnce(auditor, market, 'h1');
      await auditOnce(auditor, market, 'h2');
    }
    expect(auditor.audit(market.peerId('h1'), KEY)?.verdict).toBe('pass');
    expect(auditor.audit(market.peerId('h2'), KEY)?.verdict).toBe('pass');
  });

  it('flags no honest seller over 1,000 audits with sampled answers', async () => {
    const market = demoMarket(
      MODEL,
      [honest('h1'), honest('h2'), honest('h3'), honest('h4')],
      seededRandom(11),
    );
    const { auditor } = auditorFor(market);
    const labels = ['h1', 'h2', 'h3', 'h4'];
    let flagged = 0;
    for (let i = 0; i < 1000; i++) {
      const label = labels[i % labels.length]!;
      await auditOnce(auditor, market, label);
      if (auditor.audit(market.peerId(label), KEY)?.verdict !== 'pass') flagged++;
    }
    expect(flagged).toBe(0);
    for (const label of labels) {
      expect(auditor.audit(market.peerId(label), KEY)).toMatchObject({
        verdict: 'pass',
        disagreements: 0,
      });
    }
  }, 240_000);

  it('is inconclusive with fewer than two other sellers', async () => {
    const market = demoMarket(MODEL, [honest('h1'), { label: 'sub', weights: 'other' }]);
    const { auditor } = auditorFor(market);
    await auditOnce(auditor, market, 'sub');
    expect(auditor.audit(market.peerId('sub'), KEY)).toBeUndefined();
    expect(market.stats.requests).toBe(0);
  });

  it('spends at most the share of own spend and the daily budget, nothing without own spend', async () => {
    const market = demoMarket(MODEL, [honest('h1'), honest('h2'), honest('h3')]);
    const config: AuditConfig = {
      enabled: true,
      sampleRate: 1,
      dailyBudgetUsd: 0.25,
      maxShareOfSpend: 0.02,
    };
    const { auditor } = auditorFor(market, config);
    auditor.noteAnswer(market.peerId('h1'), KEY, 0n);
    await auditor.idle();
    expect(market.stats.requests).toBe(0);

    let own = 0n;
    for (let i = 0; i < 200; i++) {
      const cost = 2_000n; // 0.002 USD per answer
      own += cost;
      auditor.noteAnswer(market.peerId(['h1', 'h2', 'h3'][i % 3]!), KEY, cost);
      await auditor.idle();
    }
    expect(market.stats.requests).toBeGreaterThan(0);
    expect(market.stats.costMicro * 100n).toBeLessThanOrEqual(own * 2n);
  });

  it('does nothing when turned off', async () => {
    const market = demoMarket(MODEL, [honest('h1'), honest('h2'), honest('h3')]);
    const { auditor } = auditorFor(market, { ...OPEN, enabled: false });
    await auditOnce(auditor, market, 'h1');
    expect(market.stats.requests).toBe(0);
  });

  it('keeps verdicts across restarts and sets an unreadable file aside', async () => {
    const market = demoMarket(MODEL, [
      honest('h1'),
      honest('h2'),
      { label: 'sub', weights: 'svc-demo-fast' },
    ]);
    const { auditor, dir } = auditorFor(market);
    for (let i = 0; i < 4; i++) await auditOnce(auditor, market, 'sub');
    await auditor.stop();
    expect(auditor.audit(market.peerId('sub'), KEY)?.verdict).toBe('failed');

    const again = new AuditStore(dir, Date.now);
    expect(again.audit(market.peerId('sub'), KEY)?.verdict).toBe('failed');
    expect(again.spentToday().audit).toBe(market.stats.costMicro);

    writeFileSync(again.path, '{"not": "an audit file"');
    const fresh = new AuditStore(dir, Date.now);
    expect(fresh.audit(market.peerId('sub'), KEY)).toBeUndefined();
    expect(existsSync(`${again.path}.invalid`)).toBe(true);
    expect(readFileSync(join(dir, 'buyer', 'audits.json.invalid'), 'utf8')).toContain('not');
  });
});
