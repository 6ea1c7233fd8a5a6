/** Where reputation scores come from (payments/indexer supply the real source later). */
import type { PeerId } from '../identity/index.js';

/** Scores 0..100 per seller; `undefined` means unscored (excluded by a non-zero trust gate). */
export interface ReputationSource {
  score(peerId: PeerId): number | undefined;
  /** On-chain figures behind the score, when the source has them (`svc network browse`). */
  details?(peerId: PeerId): { volumeUsd: string | null; sessions: number | null } | undefined;
  /**
   * A refused usage claim or receipt (or `count` of them, restored from history): the seller
   * ranks lower (sources that keep penalties).
   */
  penalise?(peerId: PeerId, count?: number): void;
}

/** No scores at all: every seller is unscored. */
export const NO_REPUTATION: ReputationSource = { score: () => undefined };

/** Fixed scores from a map (tests, config, snapshots). */
export function staticReputation(scores: Record<string, number>): ReputationSource {
  const table = new Map(Object.entries(scores));
  return { score: (peerId) => table.get(peerId) };
}
