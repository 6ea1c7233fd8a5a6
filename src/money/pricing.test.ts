import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  costOfUsage,
  isFreePrice,
  maxCostOfRequest,
  maxOutputTokensWithin,
  rankingPrice,
  toPriceMicro,
} from './pricing.js';

const sonnet = toPriceMicro({
  inputUsdPerMillion: 3,
  outputUsdPerMillion: 15,
  cachedInputUsdPerMillion: 0.3,
});

describe('costOfUsage', () => {
  it('prices a request to the micro-USD', () => {
    // 1000 in (200 cached) + 500 out at 3 / 0.3 / 15 USD per million:
    // 800*3 + 200*0.3 + 500*15 = 2400 + 60 + 7500 = 9960 micro-USD
    expect(
      costOfUsage({ inputTokens: 1000, cachedInputTokens: 200, outputTokens: 500 }, sonnet),
    ).toBe(9960n);
  });

  it('rounds up once, at the end', () => {
    const cheap = toPriceMicro({ inputUsdPerMillion: 0.15, outputUsdPerMillion: 0.6 });
    // 1 token in at 0.15/M = 0.15 micro-USD -> 1 micro-USD
    expect(costOfUsage({ inputTokens: 1, cachedInputTokens: 0, outputTokens: 0 }, cheap)).toBe(1n);
    // 10 in + 10 out = 1.5 + 6 = 7.5 -> 8 (not 2 + 6 = 8 by accident: check 3 in + 3 out = 0.45+1.8=2.25 -> 3)
    expect(costOfUsage({ inputTokens: 3, cachedInputTokens: 0, outputTokens: 3 }, cheap)).toBe(3n);
  });

  it('bills cached tokens as input when no cached price is advertised', () => {
    const noCache = toPriceMicro({ inputUsdPerMillion: 1, outputUsdPerMillion: 2 });
    expect(
      costOfUsage({ inputTokens: 100, cachedInputTokens: 100, outputTokens: 0 }, noCache),
    ).toBe(100n);
  });

  it('rejects impossible usage', () => {
    expect(() =>
      costOfUsage({ inputTokens: 1, cachedInputTokens: 2, outputTokens: 0 }, sonnet),
    ).toThrow();
    expect(() =>
      costOfUsage({ inputTokens: -1, cachedInputTokens: 0, outputTokens: 0 }, sonnet),
    ).toThrow();
    expect(() =>
      costOfUsage({ inputTokens: 1.5, cachedInputTokens: 0, outputTokens: 0 }, sonnet),
    ).toThrow();
  });

  it('is monotonic in every token count', () => {
    fc.assert(
      fc.property(fc.nat(1e7), fc.nat(1e7), fc.nat(1e7), (a, b, c) => {
        const base = costOfUsage({ inputTokens: a, cachedInputTokens: 0, outputTokens: b }, sonnet);
        const more = costOfUsage(
          { inputTokens: a + c, cachedInputTokens: 0, outputTokens: b + c },
          sonnet,
        );
        expect(more >= base).toBe(true);
      }),
    );
  });
});

describe('budget helpers', () => {
  it('maxOutputTokensWithin never exceeds the budget and is tight', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10_000_000n }), fc.nat(100_000), (budget, input) => {
        const n = maxOutputTokensWithin(budget, input, sonnet);
        if (n > 0) expect(maxCostOfRequest(input, n, sonnet) <= budget).toBe(true);
        const next = costOfUsage(
          { inputTokens: input, cachedInputTokens: 0, outputTokens: n + 1 },
          sonnet,
        );
        expect(next > budget || n === Number.MAX_SAFE_INTEGER).toBe(true);
      }),
    );
  });

  it('ranks by input plus output price and recognises free sellers', () => {
    expect(rankingPrice(sonnet)).toBe(18_000_000n);
    expect(isFreePrice(toPriceMicro({ inputUsdPerMillion: 0, outputUsdPerMillion: 0 }))).toBe(true);
    expect(isFreePrice(sonnet)).toBe(false);
  });
});
