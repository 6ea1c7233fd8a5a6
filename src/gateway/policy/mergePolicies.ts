/**
 * Narrowing merge of routing policies (workspace, member, key, preset): each level can only
 * restrict — allow lists intersect, block lists add up, minimums take the highest, caps the
 * lowest. The sort preference is the most specific level's. Model names compare as routing
 * compares them (docs/decisions/050-model-name-normalisation.md): cosmetic variants are one model.
 */
import { normalizeModelName } from '../../catalog/index.js';
import { encodeRoutingPolicy, type RoutingPolicyWire } from '../../protocol/index.js';
import type { RoutingPolicy } from './types.js';

function intersect(a: string[] | undefined, b: string[] | undefined): string[] | undefined {
  if (!a) return b ? [...b] : undefined;
  if (!b) return [...a];
  const right = new Set(b);
  return a.filter((item) => right.has(item));
}

/** Models of `a` that `b` also names, in any spelling; undefined lists allow everything. */
function intersectModels(a: string[] | undefined, b: string[] | undefined): string[] | undefined {
  if (!a) return b ? [...b] : undefined;
  if (!b) return [...a];
  const right = new Set(b.map(normalizeModelName));
  return a.filter((model) => right.has(normalizeModelName(model)));
}

/** True when `policy` lets a key use `model` (any spelling of an allowed name). */
export function modelAllowed(policy: RoutingPolicy, model: string): boolean {
  if (!policy.allowedModels) return true;
  const key = normalizeModelName(model);
  return policy.allowedModels.some((allowed) => normalizeModelName(allowed) === key);
}

function union(a: string[] | undefined, b: string[] | undefined): string[] | undefined {
  if (!a && !b) return undefined;
  return [...new Set([...(a ?? []), ...(b ?? [])])];
}

function lower(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

function normalisePeers(peers: string[] | undefined): string[] | undefined {
  return peers?.map((peer) => peer.toLowerCase().replace(/^0x/, ''));
}

/** Merges two levels; the result is never wider than either. */
export function narrow(outer: RoutingPolicy, inner: RoutingPolicy): RoutingPolicy {
  const merged: RoutingPolicy = {};
  const allowedPeerIds = intersect(
    normalisePeers(outer.allowedPeerIds),
    normalisePeers(inner.allowedPeerIds),
  );
  if (allowedPeerIds) merged.allowedPeerIds = allowedPeerIds;
  const blockedPeerIds = union(
    normalisePeers(outer.blockedPeerIds),
    normalisePeers(inner.blockedPeerIds),
  );
  if (blockedPeerIds) merged.blockedPeerIds = blockedPeerIds;
  if (outer.minTrustScore !== undefined || inner.minTrustScore !== undefined) {
    merged.minTrustScore = Math.max(outer.minTrustScore ?? 0, inner.minTrustScore ?? 0);
  }
  if (outer.maxPricing || inner.maxPricing) {
    const a = outer.maxPricing ?? {};
    const b = inner.maxPricing ?? {};
    const caps: NonNullable<RoutingPolicy['maxPricing']> = {};
    for (const field of [
      'inputUsdPerMillion',
      'outputUsdPerMillion',
      'cachedInputUsdPerMillion',
      'imageUsd',
      'videoUsd',
    ] as const) {
      const value = lower(a[field], b[field]);
      if (value !== undefined) caps[field] = value;
    }
    merged.maxPricing = caps;
  }
  const allowedModels = intersectModels(outer.allowedModels, inner.allowedModels);
  if (allowedModels) merged.allowedModels = allowedModels;
  const sort = inner.sort ?? outer.sort;
  if (sort) merged.sort = sort;
  return merged;
}

/** Merges levels from the outermost (workspace) to the innermost (preset). */
export function mergePolicies(
  levels: ReadonlyArray<RoutingPolicy | null | undefined>,
): RoutingPolicy {
  return levels.reduce<RoutingPolicy>(
    (merged, level) => (level ? narrow(merged, level) : merged),
    {},
  );
}

/** The policy as the buyer applies it (src/protocol/routingPolicy.ts). */
export function buyerPolicyWire(policy: RoutingPolicy): RoutingPolicyWire {
  return {
    ...(policy.minTrustScore !== undefined ? { minTrustScore: policy.minTrustScore } : {}),
    ...(policy.maxPricing ? { maxPricing: policy.maxPricing } : {}),
    ...(policy.allowedPeerIds ? { allowedPeerIds: policy.allowedPeerIds } : {}),
    ...(policy.blockedPeerIds ? { blockedPeerIds: policy.blockedPeerIds } : {}),
    ...(policy.sort ? { preferFreeSellers: policy.sort === 'free-first' } : {}),
    ...(policy.sort && policy.sort !== 'free-first' ? { sort: policy.sort } : {}),
    ...(policy.allowedModels ? { allowedModels: policy.allowedModels } : {}),
  };
}

/** The policy as the `x-svc-routing-policy` header carries it to a buyer in another process. */
export function encodeBuyerPolicy(policy: RoutingPolicy): string {
  return encodeRoutingPolicy(buyerPolicyWire(policy));
}

/** Why `policy` refuses seller `peerId` (with or without `0x`, any case), or null. */
export function sellerRefusal(policy: RoutingPolicy, peerId: string): string | null {
  const peer = peerId.toLowerCase().replace(/^0x/, '');
  if (policy.blockedPeerIds?.includes(peer)) return `seller ${peer} is blocked by policy`;
  if (policy.allowedPeerIds && !policy.allowedPeerIds.includes(peer)) {
    return `seller ${peer} is not on the allowed list of this key's policy`;
  }
  return null;
}

/** Why `model` is refused by `policy`, or null when allowed. Pinned names are checked by seller too. */
export function modelRefusal(policy: RoutingPolicy, model: string): string | null {
  const at = model.indexOf('@');
  const serviceId = at > 0 ? model.slice(at + 1) : model;
  if (!modelAllowed(policy, serviceId)) {
    return `model "${serviceId}" is not among the models this key may use`;
  }
  return at > 0 ? sellerRefusal(policy, model.slice(0, at)) : null;
}
