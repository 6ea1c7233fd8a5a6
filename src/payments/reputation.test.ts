import { describe, expect, it } from 'vitest';
import type { OnChainSellerStats } from '../chain/index.js';
import {
  NEW_SELLER_DAYS,
  NEW_SELLER_SCORE_CAP,
  trustScore,
  uncappedTrustScore,
} from './reputation.js';

const NOW = 1_800_000_000;
const DAY = 86_400;
const empty: OnChainSellerStats = {
  settledVolumeMicro: 0n,
  channelCount: 0,
  uniqueBuyers: 0,
  reclaimedUnsettled: 0,
  firstSettlementAt: 0,
  lastSettlementAt: 0,
};

describe('trustScore', () => {
  it('leaves sellers without on-chain history unscored', () => {
    expect(trustScore(empty, NOW)).toBeNull();
  });

  it('gives an established seller a full score and a new one a low score', () => {
    const established = {
      ...empty,
      settledVolumeMicro: 5_000_000_000n,
      channelCount: 80,
      uniqueBuyers: 60,
      firstSettlementAt: NOW - 200 * DAY,
    };
    expect(trustScore(established, NOW)).toBe(100);
    const fresh = {
      ...empty,
      settledVolumeMicro: 1_000_000n,
      channelCount: 1,
      uniqueBuyers: 1,
      firstSettlementAt: NOW - DAY,
    };
    const score = trustScore(fresh, NOW)!;
    expect(score).toBeGreaterThan(15);
    expect(score).toBeLessThan(60);
  });

  it('grows with volume, buyers and age, and falls with channels reclaimed unsettled', () => {
    const mid = {
      ...empty,
      settledVolumeMicro: 50_000_000n,
      channelCount: 10,
      uniqueBuyers: 8,
      firstSettlementAt: NOW - 30 * DAY,
    };
    const base = trustScore(mid, NOW)!;
    expect(trustScore({ ...mid, settledVolumeMicro: 500_000_000n }, NOW)!).toBeGreaterThan(base);
    expect(trustScore({ ...mid, uniqueBuyers: 30 }, NOW)!).toBeGreaterThan(base);
    expect(trustScore({ ...mid, firstSettlementAt: NOW - 80 * DAY }, NOW)!).toBeGreaterThan(base);
    expect(trustScore({ ...mid, reclaimedUnsettled: 3 }, NOW)!).toBeLessThan(base);
    expect(trustScore({ ...mid, reclaimedUnsettled: 10 }, NOW)).toBe(0);
  });

  it('caps a seller whose first settlement is under 30 days old below the gate, whatever its volume (decision 167)', () => {
    const saturated = {
      ...empty,
      settledVolumeMicro: 20_000_000_000n,
      channelCount: 50,
      uniqueBuyers: 50,
    };
    const atAge = (days: number) => ({ ...saturated, firstSettlementAt: NOW - days * DAY });
    expect(uncappedTrustScore(atAge(1), NOW)).toBe(80);
    expect(trustScore(atAge(1), NOW)).toBe(NEW_SELLER_SCORE_CAP);
    expect(trustScore(atAge(NEW_SELLER_DAYS - 0.01), NOW)).toBe(NEW_SELLER_SCORE_CAP);
    expect(trustScore(atAge(NEW_SELLER_DAYS), NOW)).toBe(87);
    expect(trustScore(atAge(NEW_SELLER_DAYS), NOW)).toBe(
      uncappedTrustScore(atAge(NEW_SELLER_DAYS), NOW),
    );
    // A first settlement later than "now" (a clock behind the chain) counts as brand new.
    expect(trustScore(atAge(-5), NOW)).toBe(NEW_SELLER_SCORE_CAP);
  });

  it('never raises a score with the cap: a new seller below it keeps its own score', () => {
    const small = {
      ...empty,
      settledVolumeMicro: 2_000_000n,
      channelCount: 2,
      uniqueBuyers: 1,
      firstSettlementAt: NOW - 2 * DAY,
    };
    const own = uncappedTrustScore(small, NOW)!;
    expect(own).toBeLessThan(NEW_SELLER_SCORE_CAP);
    expect(trustScore(small, NOW)).toBe(own);
    const neverSettled = { ...empty, channelCount: 3, reclaimedUnsettled: 3 };
    expect(trustScore(neverSettled, NOW)).toBe(0);
    expect(trustScore({ ...empty, channelCount: 1 }, NOW)).toBe(15);
  });
});
