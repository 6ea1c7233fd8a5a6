import { describe, expect, it } from 'vitest';
import { costOfUsage, toPriceMicro } from '../../money/index.js';
import { checkClaim } from './checkClaim.js';

const price = toPriceMicro({
  inputUsdPerMillion: 3,
  outputUsdPerMillion: 15,
  cachedInputUsdPerMillion: 0.3,
});
const estimate = { inputTokens: 1000, cachedInputTokens: 0, outputTokens: 400 };
const tolerance = { percent: 10, slackTokens: 16 };
const base = { estimatedUsage: estimate, price, maxCostMicro: 1_000_000n, tolerance };

describe('checkClaim', () => {
  it('accepts a claim within the tolerance and pays the claimed cost', () => {
    const usage = { inputTokens: 1100, cachedInputTokens: 0, outputTokens: 456 };
    const result = checkClaim({
      ...base,
      claimed: { usage, costMicroUsd: costOfUsage(usage, price).toString() },
    });
    expect(result).toMatchObject({ accepted: true, billedMicro: costOfUsage(usage, price) });
  });

  it('refuses a claim just above the tolerance and pays the estimate', () => {
    const usage = { inputTokens: 1000, cachedInputTokens: 0, outputTokens: 457 };
    const result = checkClaim({ ...base, claimed: { usage } });
    expect(result).toMatchObject({
      accepted: false,
      reason: 'tokens_over_estimate',
      billedMicro: costOfUsage(estimate, price),
    });
  });

  it('refuses a stated cost above the advertised price, and honours a lower one', () => {
    const above = checkClaim({ ...base, claimed: { usage: estimate, costMicroUsd: '999999' } });
    expect(above).toMatchObject({ accepted: false, reason: 'cost_above_price' });
    const discount = checkClaim({ ...base, claimed: { usage: estimate, costMicroUsd: '5' } });
    expect(discount).toMatchObject({ accepted: true, billedMicro: 5n });
  });

  it('refuses impossible usage and pays the estimate when there is no claim (cancelled stream)', () => {
    const bad = checkClaim({
      ...base,
      claimed: { usage: { inputTokens: 10, cachedInputTokens: 11, outputTokens: 0 } },
    });
    expect(bad).toMatchObject({ accepted: false, reason: 'invalid_usage' });
    const none = checkClaim({ ...base, claimed: { error: 'reset' } });
    expect(none).toMatchObject({ accepted: true, billedMicro: costOfUsage(estimate, price) });
  });

  it('with a refused receipt, refuses the claim and pays the lower of the claim and the estimate (decision 168)', () => {
    const above = { inputTokens: 1090, cachedInputTokens: 0, outputTokens: 430 };
    const below = { inputTokens: 900, cachedInputTokens: 0, outputTokens: 300 };
    const cases = [
      // Within the tolerance: paid as claimed with a good receipt, the estimate without one.
      [{ usage: above }, costOfUsage(above, price), costOfUsage(estimate, price)],
      // Below the estimate: the claim either way, never raised to the estimate.
      [{ usage: below }, costOfUsage(below, price), costOfUsage(below, price)],
      // A discount stays a discount.
      [{ usage: estimate, costMicroUsd: '5' }, 5n, 5n],
      // Already refused: the estimate either way.
      [
        { usage: { ...estimate, outputTokens: 900 } },
        costOfUsage(estimate, price),
        costOfUsage(estimate, price),
      ],
      // No claim: what the buyer saw delivered.
      [{ error: 'reset' }, costOfUsage(estimate, price), costOfUsage(estimate, price)],
    ] as const;
    for (const [claimed, withReceipt, refused] of cases) {
      expect(checkClaim({ ...base, claimed }).billedMicro).toBe(withReceipt);
      const result = checkClaim({ ...base, claimed, receiptRefused: true });
      expect(result).toMatchObject({ accepted: false, reason: 'receipt_refused' });
      expect(result.billedMicro).toBe(refused);
      expect(result.billedMicro <= withReceipt).toBe(true);
      expect(costOfUsage(result.billedUsage, price) >= result.billedMicro).toBe(true);
    }
    expect(
      checkClaim({ ...base, maxCostMicro: 100n, claimed: { usage: above }, receiptRefused: true })
        .billedMicro,
    ).toBe(100n);
  });

  it('never pays above the request cap', () => {
    const result = checkClaim({ ...base, maxCostMicro: 100n, claimed: { usage: estimate } });
    expect(result.billedMicro).toBe(100n);
  });

  it('takes hidden reasoning as claimed and checks the visible output, within the cap', () => {
    // A reasoning model: 2,000 reasoning tokens the buyer never saw, 400 visible ones it counted.
    const usage = {
      inputTokens: 1000,
      cachedInputTokens: 0,
      outputTokens: 2400,
      reasoningTokens: 2000,
    };
    const reasoning = checkClaim({ ...base, claimed: { usage } });
    expect(reasoning).toMatchObject({ accepted: true, billedMicro: costOfUsage(usage, price) });
    // The same total without the reasoning split is an over-claim.
    const { reasoningTokens: _, ...unsplit } = usage;
    expect(checkClaim({ ...base, claimed: { usage: unsplit } })).toMatchObject({
      accepted: false,
      reason: 'tokens_over_estimate',
    });
    // Visible output above the buyer's count is still refused, reasoning or not.
    const inflated = { ...usage, outputTokens: 2600 };
    expect(checkClaim({ ...base, claimed: { usage: inflated } })).toMatchObject({
      accepted: false,
      reason: 'tokens_over_estimate',
    });
    // Reasoning can never cost more than the request's cap, nor exceed the output it is part of.
    expect(checkClaim({ ...base, maxCostMicro: 1000n, claimed: { usage } }).billedMicro).toBe(
      1000n,
    );
    const impossible = { ...usage, reasoningTokens: 2401 };
    expect(checkClaim({ ...base, claimed: { usage: impossible } })).toMatchObject({
      accepted: false,
      reason: 'invalid_usage',
    });
  });
});
