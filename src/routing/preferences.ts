/**
 * Effective routing preferences: the buyer's own (`buyer.routingPreferences`), narrowed by a
 * preset and by a gateway policy. Narrowing only restricts: allow lists intersect, block lists
 * add up, minimum trust takes the max, price caps the min (ARCHITECTURE "Gateway").
 */
import { normalizeModelName } from '../catalog/index.js';
import type { RoutingPreferences } from '../config/index.js';
import { type PeerId, parsePeerId } from '../identity/index.js';
import { type MicroUsd, usdNumberToMicro } from '../money/index.js';
import {
  decodeRoutingPolicy,
  type RoutingPolicyWire,
  type RoutingSort,
} from '../protocol/index.js';

/** The buyer never pays more than this for one video, whatever a policy allows. */
export const VIDEO_PRICE_CEILING_MICRO = 5_000_000n;

/** Hard price caps in exact units (token caps per million tokens). */
export interface PriceCaps {
  inputMicroPerMillion?: MicroUsd;
  outputMicroPerMillion?: MicroUsd;
  cachedInputMicroPerMillion?: MicroUsd;
  imageMicro?: MicroUsd;
  videoMicro?: MicroUsd;
}

/** Preferences in the form route selection uses. */
export interface EffectivePreferences {
  minTrustScore: number;
  caps: PriceCaps;
  /** Undefined: everyone allowed. */
  allowedPeerIds?: Set<PeerId>;
  blockedPeerIds: Set<PeerId>;
  preferFreeSellers: boolean;
  /** Normalised model keys a gateway key may use; undefined: all. */
  allowedModelKeys?: Set<string>;
  /** Order of eligible sellers (docs/decisions/150-routing-by-speed.md). */
  sort: RoutingSort;
}

/** A partial preference set that narrows another (preset, gateway policy): the wire shape. */
export type PreferenceNarrowing = RoutingPolicyWire;

/** Decodes `x-svc-routing-policy` (src/protocol/routingPolicy.ts); 400 when malformed. */
export const parseGatewayPolicy = decodeRoutingPolicy;

function minCap(a: MicroUsd | undefined, b: MicroUsd | undefined): MicroUsd | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a < b ? a : b;
}

function peerSet(ids: readonly string[]): Set<PeerId> {
  const set = new Set<PeerId>();
  for (const id of ids) {
    try {
      set.add(parsePeerId(id));
    } catch {
      // An id that is not a peer id matches no seller.
    }
  }
  return set;
}

/** The buyer's own preferences in exact units. */
export function ownPreferences(prefs: RoutingPreferences): EffectivePreferences {
  return narrowPreferences(
    {
      minTrustScore: prefs.minTrustScore,
      caps: { videoMicro: VIDEO_PRICE_CEILING_MICRO },
      blockedPeerIds: new Set(),
      preferFreeSellers: prefs.preferFreeSellers,
      sort: prefs.sort ?? 'price',
    },
    {
      ...(prefs.maxPricing ? { maxPricing: prefs.maxPricing } : {}),
      allowedPeerIds: prefs.allowedPeerIds,
      blockedPeerIds: prefs.blockedPeerIds,
    },
  );
}

/** `base` restricted by `narrowing` (never widened). */
export function narrowPreferences(
  base: EffectivePreferences,
  narrowing: PreferenceNarrowing,
): EffectivePreferences {
  const caps: PriceCaps = { ...base.caps };
  const max = narrowing.maxPricing;
  if (max) {
    const micro = (value: number | undefined) =>
      value === undefined ? undefined : usdNumberToMicro(value);
    caps.inputMicroPerMillion = minCap(caps.inputMicroPerMillion, micro(max.inputUsdPerMillion));
    caps.outputMicroPerMillion = minCap(caps.outputMicroPerMillion, micro(max.outputUsdPerMillion));
    caps.cachedInputMicroPerMillion = minCap(
      caps.cachedInputMicroPerMillion,
      micro(max.cachedInputUsdPerMillion),
    );
    caps.imageMicro = minCap(caps.imageMicro, micro(max.imageUsd));
    caps.videoMicro = minCap(caps.videoMicro, micro(max.videoUsd));
  }
  let allowed = base.allowedPeerIds;
  if (narrowing.allowedPeerIds && narrowing.allowedPeerIds.length > 0) {
    const extra = peerSet(narrowing.allowedPeerIds);
    allowed = allowed ? new Set([...allowed].filter((id) => extra.has(id))) : extra;
  }
  let models = base.allowedModelKeys;
  if (narrowing.allowedModels) {
    const extra = new Set(narrowing.allowedModels.map(normalizeModelName));
    models = models ? new Set([...models].filter((key) => extra.has(key))) : extra;
  }
  const result: EffectivePreferences = {
    minTrustScore: Math.max(base.minTrustScore, narrowing.minTrustScore ?? 0),
    caps,
    blockedPeerIds: new Set([...base.blockedPeerIds, ...peerSet(narrowing.blockedPeerIds ?? [])]),
    preferFreeSellers: base.preferFreeSellers || Boolean(narrowing.preferFreeSellers),
    // Not a restriction: a later layer's sort replaces an earlier one's.
    sort: narrowing.sort ?? base.sort,
  };
  if (allowed) result.allowedPeerIds = allowed;
  if (models) result.allowedModelKeys = models;
  return result;
}

/**
 * Preferences for a pinned request: the user chose the seller, so their own trust gate and
 * allow list do not apply, but their block list and price caps do, and a gateway policy
 * applies in full (policies apply to pinned routes too).
 */
export function pinPreferences(
  own: EffectivePreferences,
  gateway: PreferenceNarrowing | undefined,
): EffectivePreferences {
  const base: EffectivePreferences = {
    minTrustScore: 0,
    caps: own.caps,
    blockedPeerIds: own.blockedPeerIds,
    preferFreeSellers: own.preferFreeSellers,
    sort: own.sort,
  };
  if (own.allowedModelKeys) base.allowedModelKeys = own.allowedModelKeys;
  return gateway ? narrowPreferences(base, gateway) : base;
}
