/**
 * The offers a request may use, for pricing its reservation
 * (docs/decisions/169-reservations-priced-at-the-route.md): those the buyer's own preferences
 * admit (its catalog's `eligible`), narrowed by the key's merged policy (seller allow and block
 * lists, trust minimum, price caps) and a pin, kept in the catalog's routing order. Pure.
 */
import { type MicroUsd, type TokenPriceMicro, usdNumberToMicro } from '../../money/index.js';
import { sellerRefusal } from '../policy/mergePolicies.js';
import type { RoutingPolicy } from '../policy/types.js';

/** One offer of a model as the buyer's catalog lists it. */
export interface PricedOffer {
  /** Lower case, no `0x`. */
  peerId: string;
  price: TokenPriceMicro;
  reputationScore: number | null;
  /** The buyer's own routing preferences admit it. */
  eligible: boolean;
}

function above(price: MicroUsd, capUsd: number | undefined): boolean {
  return capUsd !== undefined && price > usdNumberToMicro(capUsd);
}

/** Whether `policy` (and `pinnedPeer`, when set) lets routing use `offer`. */
function admitted(offer: PricedOffer, policy: RoutingPolicy, pinnedPeer?: string): boolean {
  if (!offer.eligible) return false;
  if (pinnedPeer !== undefined && offer.peerId !== pinnedPeer) return false;
  if (sellerRefusal(policy, offer.peerId) !== null) return false;
  const minimum = policy.minTrustScore ?? 0;
  // As routing does: with a minimum, an unscored seller is not admitted.
  if (minimum > 0 && (offer.reputationScore === null || offer.reputationScore < minimum)) {
    return false;
  }
  const caps = policy.maxPricing;
  const { price } = offer;
  return !(
    above(price.inputMicroPerMillion, caps?.inputUsdPerMillion) ||
    above(price.outputMicroPerMillion, caps?.outputUsdPerMillion) ||
    above(
      price.cachedInputMicroPerMillion ?? price.inputMicroPerMillion,
      caps?.cachedInputUsdPerMillion,
    )
  );
}

/** The offers of `offers` that routing may use for a request under `policy`, in routing order. */
export function routeOffers(
  offers: readonly PricedOffer[],
  policy: RoutingPolicy,
  pinnedPeer?: string,
): PricedOffer[] {
  const pinned = pinnedPeer?.toLowerCase().replace(/^0x/, '');
  return offers.filter((offer) => admitted(offer, policy, pinned));
}
