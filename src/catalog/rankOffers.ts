/**
 * Ranking of a model's offers: cheapest first; trust breaks price ties
 * (minus penalties for recent failures); free sellers first when preferred; sellers cooling
 * down after failures last, and sellers that failed the buyer's audits of this model after every
 * other (docs/decisions/153-model-audits.md). Also the cached-input rule (docs/guide/buyer.md "The buyer proxy").
 */
import type { PeerId } from '../identity/index.js';
import type { RoutingSort } from '../protocol/index.js';
import type { Offer } from './offers.js';
import type { ReputationSource } from './reputation.js';

/** Recent-failure state of sellers (routing keeps it). */
export interface OfferHealth {
  /** Points subtracted from the trust tie-break for recent failures. */
  penalty(peerId: PeerId): number;
  /** True while the seller cools down after repeated failures. */
  coolingDown(peerId: PeerId): boolean;
}

export const HEALTHY: OfferHealth = { penalty: () => 0, coolingDown: () => false };

/** What the buyer has measured of one seller's model; absent fields are not measured yet. */
export interface OfferSpeed {
  ttftMs?: number;
  outputTokensPerSecond?: number;
  samples: number;
}

/** Measured speed per (seller, model) (src/routing/speed.ts keeps it). */
export interface SpeedSource {
  speed(peerId: PeerId, modelKey: string): OfferSpeed | undefined;
}

/** The buyer's audit verdict on one seller's model (src/audit keeps them). */
export interface OfferAudit {
  verdict: 'pass' | 'suspect' | 'failed';
  audits: number;
  disagreements: number;
}

/** Audit verdicts per (seller, model). */
export interface AuditSource {
  audit(peerId: PeerId, modelKey: string): OfferAudit | undefined;
}

/** Trust points a `suspect` verdict takes off the tie-break (a `failed` seller ranks last). */
const SUSPECT_PENALTY = 25;

/** An offer with the numbers ranking uses. */
export interface RankedOffer {
  offer: Offer;
  reputationScore: number | undefined;
  /** Model-specific score: halved by the cached-input rule and by a `suspect` audit, 0 when `failed`. */
  effectiveReputationScore: number | undefined;
  coolingDown: boolean;
  /** True when this seller failed the buyer's audits of this model. */
  auditFailed: boolean;
  audit?: OfferAudit;
  /** effective score minus failure penalty (unscored = 0). */
  trustKey: number;
  speed?: OfferSpeed;
}

export interface RankContext {
  reputation: ReputationSource;
  health: OfferHealth;
  preferFreeSellers: boolean;
  /** Whether any seller of this model advertises a cached-input price. */
  anyCachedPrice: boolean;
  speed?: SpeedSource;
  sort?: RoutingSort;
  audits?: AuditSource;
}

/** The model-specific score: halved when others advertise a cached price and this seller does not. */
export function effectiveReputation(
  score: number | undefined,
  offer: Offer,
  anyCachedPrice: boolean,
): number | undefined {
  if (score === undefined) return undefined;
  return anyCachedPrice && !offer.hasCachedPrice ? score / 2 : score;
}

/** Attaches ranking numbers to an offer. */
export function rankedOffer(offer: Offer, context: RankContext): RankedOffer {
  const reputationScore = context.reputation.score(offer.peerId);
  const audit = context.audits?.audit(offer.peerId, offer.modelKey);
  let effective = effectiveReputation(reputationScore, offer, context.anyCachedPrice);
  if (effective !== undefined && audit && audit.verdict !== 'pass') {
    effective = audit.verdict === 'failed' ? 0 : effective / 2;
  }
  const auditPenalty = audit?.verdict === 'suspect' ? SUSPECT_PENALTY : 0;
  const ranked: RankedOffer = {
    offer,
    reputationScore,
    effectiveReputationScore: effective,
    coolingDown: context.health.coolingDown(offer.peerId),
    auditFailed: audit?.verdict === 'failed',
    trustKey: (effective ?? 0) - context.health.penalty(offer.peerId) - auditPenalty,
  };
  if (audit) ranked.audit = audit;
  const speed = context.speed?.speed(offer.peerId, offer.modelKey);
  if (speed) ranked.speed = speed;
  return ranked;
}

/**
 * Speed order for `sort`: negative when `a` is faster. A seller not measured yet ranks first,
 * so every seller gets measured once (docs/decisions/150-routing-by-speed.md).
 */
function compareSpeed(a: RankedOffer, b: RankedOffer, sort: RoutingSort): number {
  const value = (r: RankedOffer) =>
    sort === 'latency' ? r.speed?.ttftMs : -(r.speed?.outputTokensPerSecond ?? Number.NaN);
  const x = value(a);
  const y = value(b);
  const known = (v: number | undefined) => v !== undefined && !Number.isNaN(v);
  if (!known(x) || !known(y)) return known(x) === known(y) ? 0 : known(x) ? 1 : -1;
  return x! - y!;
}

/** Negative when `a` ranks before `b`. */
export function compareRanked(
  a: RankedOffer,
  b: RankedOffer,
  preferFreeSellers: boolean,
  sort: RoutingSort = 'price',
): number {
  if (a.auditFailed !== b.auditFailed) return a.auditFailed ? 1 : -1;
  if (a.coolingDown !== b.coolingDown) return a.coolingDown ? 1 : -1;
  if (preferFreeSellers && a.offer.free !== b.offer.free) return a.offer.free ? -1 : 1;
  if (sort !== 'price') {
    const bySpeed = compareSpeed(a, b, sort);
    if (bySpeed !== 0) return bySpeed;
  }
  if (a.offer.rankPrice !== b.offer.rankPrice) return a.offer.rankPrice - b.offer.rankPrice;
  if (a.trustKey !== b.trustKey) return b.trustKey - a.trustKey;
  return a.offer.peerId < b.offer.peerId ? -1 : a.offer.peerId > b.offer.peerId ? 1 : 0;
}

/** All offers, ranked (full sort; routing uses a bounded top-k instead). */
export function rankOffers(offers: readonly Offer[], context: RankContext): RankedOffer[] {
  return offers
    .map((offer) => rankedOffer(offer, context))
    .sort((a, b) => compareRanked(a, b, context.preferFreeSellers, context.sort));
}
