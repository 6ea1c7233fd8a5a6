/**
 * Seller trust score 0-100 from on-chain stats (decisions 036 and 167). Pure scoring plus a
 * batched, cached reader. The score rewards money actually settled, many distinct paying buyers
 * and a long history, and punishes channels buyers had to reclaim without the seller ever settling
 * (a seller that takes reserves and never serves):
 *
 *   volume   35 * min(1, log10(1 + settledUsd) / log10(1 + 1000))   (1,000 USD saturates)
 *   buyers   30 * min(1, log2(1 + uniqueBuyers) / log2(1 + 50))      (50 buyers saturate)
 *   age      20 * min(1, daysSinceFirstSettlement / 90)
 *   clean    15 * (1 - reclaimedUnsettled / channelCount)
 *   then the sum is multiplied by (1 - reclaimedShare) once more, and rounded.
 *
 * Until its first settlement is `NEW_SELLER_DAYS` old (chain time) a seller scores at most
 * `NEW_SELLER_SCORE_CAP`, below the default gate: volume and buyers cost a seller only gas when
 * it pays itself through keys it funds, so they alone must not open the gate (decision 167).
 *
 * A seller with no channel on chain has no score (`null`): routing treats it as unscored.
 */
import type { Address } from 'viem';
import type { OnChainSellerStats, PaymentsContract } from '../chain/index.js';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';

const DAY_SECONDS = 86_400;

/** Days a seller's first settlement must be old (chain time) before its score may pass the cap. */
export const NEW_SELLER_DAYS = 30;
/** The most a seller younger than `NEW_SELLER_DAYS` scores: below the default gate of 60. */
export const NEW_SELLER_SCORE_CAP = 50;

/** Days since the first settlement (0 when never settled, or when it is later than now). */
function daysSinceFirstSettlement(stats: OnChainSellerStats, nowSeconds: number): number {
  if (stats.firstSettlementAt <= 0) return 0;
  return Math.max(0, nowSeconds - stats.firstSettlementAt) / DAY_SECONDS;
}

/** Trust score 0-100 of one seller, or null when it has no on-chain history. */
export function trustScore(stats: OnChainSellerStats, nowSeconds: number): number | null {
  const score = uncappedTrustScore(stats, nowSeconds);
  if (score === null || daysSinceFirstSettlement(stats, nowSeconds) >= NEW_SELLER_DAYS) {
    return score;
  }
  return Math.min(score, NEW_SELLER_SCORE_CAP);
}

/** The score without the new-seller cap: decision 036's formula alone. */
export function uncappedTrustScore(stats: OnChainSellerStats, nowSeconds: number): number | null {
  if (stats.channelCount === 0 && stats.settledVolumeMicro === 0n) return null;
  const settledUsd = Number(stats.settledVolumeMicro / 1000n) / 1000;
  const volume = 35 * Math.min(1, Math.log10(1 + settledUsd) / Math.log10(1001));
  const buyers = 30 * Math.min(1, Math.log2(1 + stats.uniqueBuyers) / Math.log2(51));
  const age = 20 * Math.min(1, daysSinceFirstSettlement(stats, nowSeconds) / 90);
  const reclaimedShare =
    stats.channelCount > 0 ? Math.min(1, stats.reclaimedUnsettled / stats.channelCount) : 0;
  const clean = 15 * (1 - reclaimedShare);
  const score = (volume + buyers + age + clean) * (1 - reclaimedShare);
  return Math.max(0, Math.min(100, Math.round(score)));
}

export interface ReputationReaderOptions {
  contract: PaymentsContract;
  clock?: Clock;
  /** How long fetched stats are reused. Default 5 minutes. */
  cacheTtlMs?: number;
  /** Sellers per contract call. Default 200. */
  batchSize?: number;
}

export interface SellerReputation {
  address: Address;
  score: number | null;
  stats: OnChainSellerStats;
}

/** Reads stats of many sellers in few calls and scores them; results are cached. */
export class ReputationReader {
  private readonly options: ReputationReaderOptions;
  private readonly clock: Clock;
  private readonly cache = new Map<string, { at: number; value: SellerReputation }>();

  constructor(options: ReputationReaderOptions) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
  }

  /** Reputation of each address (same order). Throws when the chain is unreachable. */
  async read(addresses: readonly Address[]): Promise<SellerReputation[]> {
    const ttl = this.options.cacheTtlMs ?? 300_000;
    const now = this.clock.now();
    const missing = [
      ...new Set(addresses.map((address) => address.toLowerCase() as Address)),
    ].filter((address) => {
      const hit = this.cache.get(address);
      return !hit || now - hit.at > ttl;
    });
    const batch = this.options.batchSize ?? 200;
    const nowSeconds = Math.floor((await this.options.contract.chainTime()) || now / 1000);
    for (let start = 0; start < missing.length; start += batch) {
      const slice = missing.slice(start, start + batch);
      const stats = await this.options.contract.sellerStats(slice);
      slice.forEach((address, index) => {
        const entry = stats[index]!;
        this.cache.set(address, {
          at: now,
          value: { address, stats: entry, score: trustScore(entry, nowSeconds) },
        });
      });
    }
    return addresses.map((address) => this.cache.get(address.toLowerCase())!.value);
  }
}
