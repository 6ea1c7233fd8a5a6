/**
 * The auditor in an in-process market (src/audit/testing/demoMarket.ts): the real demo model
 * answers, the real auditor shapes, schedules, pays and judges, time is virtual;
 * src/audit/audits.e2e.test.ts covers libp2p and HTTP.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditConfig } from '../config/index.js';
import { removeTempDir, tempDir } from '../testing/index.js';
import { AuditStore } from './store.js';
import { DemoMarket, type MarketSeller, OPEN_AUDITS, seededRandom } from './testing/demoMarket.js';
import { userTraffic } from './testing/userTraffic.js';

const MODEL = 'svc-demo-smart';
const dirs: string[] = [];
const markets: DemoMarket[] = [];
afterEach(() => {
  for (const market of markets.splice(0)) market.close();
  for (const dir of dirs.splice(0)) removeTempDir(dir);
});

function open(
  sellers: MarketSeller[],
  options: { config?: AuditConfig; dataDir?: string; seed?: number } = {},
) {
  const market = new DemoMarket({ model: MODEL, sellers, seed: options.seed ?? 1, ...options });
  markets.push(market);
  return market;
}

const HONEST: MarketSeller[] = [{ label: 'h1' }, { label: 'h2' }, { label: 'h3' }];
const SUBSTITUTE: MarketSeller = { label: 'x', substitute: 'svc-demo-fast' };

describe('auditor', () => {
  it('fails a seller serving another model, passes the honest ones, and keeps the probes behind each verdict', async () => {
    const market = open([...HONEST, SUBSTITUTE]);
    await market.run('x', userTraffic(200, seededRandom(2)));
    const standing = market.verdict('x')!;
    expect(standing.verdict).toBe('failed');
    expect(standing.pValue).toBeLessThanOrEqual(1e-6);
    expect(standing.disagreements).toBeGreaterThan(standing.audits / 2);
    const probe = standing.probes.at(-1)!;
    expect(probe.answers.length).toBeGreaterThanOrEqual(3);
    expect(probe.scores).toHaveLength(probe.answers.length);
    expect(probe.answers.map((answer) => answer.peerId)).toContain(market.peerId('x'));
    for (const answer of probe.answers) expect(answer.text.length).toBeGreaterThan(0);
    for (const label of ['h1', 'h2', 'h3']) expect(market.verdict(label)?.verdict).toBe('pass');
    // Once failed, x is never asked again as a reference for the others.
    const before = market.tally.get(market.peerId('x'))!.probes;
    for (const label of ['h1', 'h2'])
      await market.run(label, userTraffic(40, seededRandom(3), market.now + 1));
    expect(market.tally.get(market.peerId('x'))!.probes).toBe(before);
  });

  it('does not audit with fewer than two other sellers of the model', async () => {
    const market = open([{ label: 'h1' }, SUBSTITUTE]);
    await market.run('x', userTraffic(30, seededRandom(4)));
    expect(market.verdict('x')).toBeUndefined();
    expect(market.spend.audit).toBe(0n);
    expect(market.tally.get(market.peerId('x'))!.probes).toBe(0);
  });

  it('copies the buyer’s own traffic: paths, headers in order, parameters and identity, never its words', async () => {
    const market = open([...HONEST, { label: 'x' }]);
    await market.run('x', userTraffic(300, seededRandom(5)));
    const views = market.views.get(market.peerId('x'))!;
    const users = views.filter((view) => !view.probe);
    const probes = views.filter((view) => view.probe);
    expect(probes.length).toBeGreaterThan(10);
    const signature = (view: (typeof views)[number]) =>
      JSON.stringify([view.path, view.headers, Object.keys(view.json)]);
    const userSignatures = new Set(users.map(signature));
    for (const view of probes) {
      expect(userSignatures.has(signature(view))).toBe(true);
      expect(view.identity).toBe('default');
    }
    // No run of 24 characters of any user's text reaches a probe.
    const userTexts = users.map((view) => new TextDecoder().decode(view.body));
    for (const view of probes) {
      const text = JSON.stringify(view.json.messages ?? view.json.input ?? '');
      for (const piece of text.match(/[A-Za-z ,.']{24,}/g) ?? []) {
        const sample = piece.slice(0, 24);
        if (/^(You are|Use it|Follow the)/.test(sample)) continue;
        expect(userTexts.some((user) => user.includes(sample))).toBe(false);
      }
    }
  });

  it('writes the ids of per-request headers anew: a seller never sees a trace context twice', async () => {
    // A client traced with OpenTelemetry sends a fresh W3C trace context with every request.
    const random = seededRandom(21);
    const hex = (digits: number) =>
      Array.from({ length: digits }, () => Math.floor(random() * 16).toString(16)).join('');
    const traffic = userTraffic(120, seededRandom(22)).map(({ at, request }) => ({
      at,
      request: {
        ...request,
        headers: [
          ...request.headers,
          ['traceparent', `00-${hex(32)}-${hex(16)}-01`] as [string, string],
        ],
      },
    }));
    const market = open([...HONEST, { label: 'x' }]);
    await market.run('x', traffic);
    const views = [...market.views.values()].flat();
    const traceOf = (view: (typeof views)[number]) =>
      view.headers.find(([name]) => name === 'traceparent')?.[1];
    const probes = views.filter((view) => view.probe);
    expect(probes.length).toBeGreaterThan(10);
    const seen = new Set(views.map(traceOf));
    expect(seen.size).toBe(views.length);
    for (const view of probes) {
      expect(traceOf(view)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      // Everything else as the copied client sent it, in its order.
      expect(view.headers.map(([name]) => name).at(-1)).toBe('traceparent');
    }
  });

  it('spreads probes in time like the buyer’s own requests: no bursts', async () => {
    const market = open([...HONEST, { label: 'x' }]);
    await market.run('x', userTraffic(400, seededRandom(6)));
    const views = market.views.get(market.peerId('x'))!;
    const gapBefore = (index: number) => views[index]!.at - views[index - 1]!.at;
    const median = (values: number[]) =>
      values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const probeGaps: number[] = [];
    const userGaps: number[] = [];
    for (let i = 1; i < views.length; i++)
      (views[i]!.probe ? probeGaps : userGaps).push(gapBefore(i));
    expect(probeGaps.length).toBeGreaterThan(20);
    expect(median(probeGaps)).toBeGreaterThan(median(userGaps) / 3);
    expect(median(probeGaps)).toBeLessThan(median(userGaps) * 3);
  });

  it('sends each copy one of the buyer’s own gaps after its last request, also when a request interrupted the wait', async () => {
    const market = open([...HONEST, { label: 'x' }]);
    const traffic = userTraffic(300, seededRandom(23));
    await market.run('x', traffic);
    const gaps = new Set(
      traffic.slice(1).map((item, i) => Math.min(OPEN_AUDITS.maxDelayMs, item.at - traffic[i]!.at)),
    );
    const views = market.views.get(market.peerId('x'))!;
    let checked = 0;
    let lastUser: number | undefined;
    let users = 0;
    for (const view of views) {
      if (!view.probe) {
        lastUser = view.at;
        users++;
        continue;
      }
      // Once the buyer has gaps of its own to copy (before, a copy draws a default one).
      if (users < 20 || lastUser === undefined) continue;
      expect(gaps.has(view.at - lastUser)).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('pays each identity’s audits from that identity, within its share of its own spend and the daily budget', async () => {
    const config: AuditConfig = {
      enabled: true,
      sampleRate: 1,
      dailyBudgetUsd: 0.25,
      maxShareOfSpend: 0.02,
      maxDelayMs: 600_000,
      realAnswers: false,
    };
    const market = open([...HONEST, { label: 'x' }], { config });
    // Nothing without own spend.
    expect(market.store.spentToday('default')).toEqual({ own: 0n, audit: 0n });
    // One UTC day of traffic (the market's clock starts at the epoch): the allowance is daily.
    const day = userTraffic(800, seededRandom(7)).filter((item) => item.at < 86_000_000);
    await market.run('x', day, 86_000_000);
    const spent = market.store.spentToday('default');
    expect(spent.own).toBe(market.spend.own);
    expect(spent.audit).toBe(market.spend.audit);
    expect(spent.audit).toBeGreaterThan(0n);
    expect(spent.audit * 100n).toBeLessThanOrEqual(spent.own * 2n);
    expect(market.store.spentToday('teamx')).toEqual({ own: 0n, audit: 0n });
  });

  it('does nothing when turned off', async () => {
    const market = open([...HONEST, SUBSTITUTE], { config: { ...OPEN_AUDITS, enabled: false } });
    await market.run('x', userTraffic(50, seededRandom(8)));
    expect(market.spend.audit).toBe(0n);
    expect(market.verdict('x')).toBeUndefined();
  });

  it('keeps verdicts across restarts, and sets an older kind of audit file aside', async () => {
    const dir = tempDir('svc-audit-');
    dirs.push(dir);
    writeFileSync(join(dir, 'placeholder'), '');
    const market = open([...HONEST, SUBSTITUTE], { dataDir: dir });
    await market.run('x', userTraffic(200, seededRandom(9)));
    const before = market.verdict('x')!;
    expect(before.verdict).toBe('failed');
    market.close();
    markets.splice(markets.indexOf(market), 1);

    const again = new AuditStore(dir, Date.now);
    expect(again.audit(market.peerId('x'), market.modelKey)).toMatchObject({
      verdict: 'failed',
      pValue: before.pValue,
      audits: before.audits,
    });
    again.close();

    writeFileSync(join(dir, 'buyer', 'audits.json'), '{"day":"2026-01-01"}');
    const warnings: string[] = [];
    const fresh = new AuditStore(dir, Date.now, (message) => warnings.push(message));
    expect(existsSync(join(dir, 'buyer', 'audits.json.v1'))).toBe(true);
    expect(warnings[0]).toContain('moved aside');
    expect(fresh.audit(market.peerId('x'), market.modelKey)?.verdict).toBe('failed');
    fresh.close();
  });

  it('stops: probes under way are dropped', async () => {
    const market = open([...HONEST, { label: 'x' }]);
    const traffic = userTraffic(20, seededRandom(10));
    await market.run('x', traffic, traffic.at(-1)!.at);
    await market.auditor.stop();
    await market.auditor.idle();
    const probes = market.probes.length;
    await market.drain();
    expect(market.probes.length).toBe(probes);
  });
});
