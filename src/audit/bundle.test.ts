import { afterEach, describe, expect, it } from 'vitest';
import { bundleOf, verifyBundle } from './bundle.js';
import { DemoMarket, seededRandom } from './testing/demoMarket.js';
import { userTraffic } from './testing/userTraffic.js';

const markets: DemoMarket[] = [];
afterEach(() => {
  for (const market of markets.splice(0)) market.close();
});

async function failedStanding() {
  const market = new DemoMarket({
    model: 'svc-demo-smart',
    seed: 21,
    sellers: [
      { label: 'h1' },
      { label: 'h2' },
      { label: 'h3' },
      { label: 'x', substitute: 'svc-demo-fast' },
    ],
  });
  markets.push(market);
  await market.run('x', userTraffic(200, seededRandom(22)));
  const peerId = market.peerId('x');
  const standing = market.verdict('x')!;
  expect(standing.verdict).toBe('failed');
  return { peerId, bundle: JSON.parse(JSON.stringify(bundleOf(peerId, standing, 1))) };
}

describe('audit bundles', () => {
  it('recompute the apartness and the verdict from the answers alone', async () => {
    const { bundle } = await failedStanding();
    const report = verifyBundle(bundle);
    expect(report).toMatchObject({ ok: true, verdictMatches: true, problems: [] });
    expect(report.recomputed!.verdict).toBe('failed');
    expect(report.probes).toBe(bundle.probes.length);
    // The in-process market has no sellers to sign: every answer is counted without a receipt.
    expect(report.receipts).toEqual({ verified: 0, missing: report.answers });
  });

  it('do not verify once an answer, a score or the verdict is changed', async () => {
    const { bundle } = await failedStanding();
    const answer = JSON.parse(JSON.stringify(bundle));
    answer.probes[0].answers[0].text = 'something else entirely';
    expect(verifyBundle(answer).ok).toBe(false);
    expect(verifyBundle(answer).problems[0]!.problem).toContain('apartness');

    const verdict = JSON.parse(JSON.stringify(bundle));
    verdict.verdict.verdict = 'pass';
    expect(verifyBundle(verdict)).toMatchObject({ ok: false, verdictMatches: false });

    expect(verifyBundle({ kind: 'something' })).toMatchObject({ ok: false, recomputed: null });
    expect(verifyBundle(null).problems[0]!.problem).toContain('not an audit bundle');
  });
});
