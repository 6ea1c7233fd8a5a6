/**
 * Route selection: pinned requests go to one seller, automatic ones to the
 * best-ranked eligible offers of the normalised model. Returns the candidates in order for
 * failover; when nothing is eligible, throws 502 `model_not_found` naming why each offer was
 * excluded and close model names.
 */
import {
  type AuditSource,
  closestModelNames,
  compareRanked,
  HEALTHY,
  type ModelType,
  normalizeModelName,
  type Offer,
  type OfferHealth,
  type OfferIndex,
  offersByPrice,
  type RankedOffer,
  type ReputationSource,
  rankedOffer,
  type SpeedSource,
} from '../catalog/index.js';
import { SvcError } from '../errors/index.js';
import type { PeerId } from '../identity/index.js';
import type { ApiProtocol } from '../network/index.js';
import type { EffectivePreferences } from './preferences.js';
import type { RoutingTarget } from './target.js';

/** Picks the protocol to speak to a seller for a client protocol (the translation seam). */
export type ProtocolChooser = (
  client: ApiProtocol,
  offered: readonly ApiProtocol[],
) => ApiProtocol | undefined;

/** Pass-through only: the seller must speak the client's format. */
export const passThroughProtocol: ProtocolChooser = (client, offered) =>
  offered.includes(client) ? client : undefined;

export interface RouteRequest {
  target: RoutingTarget;
  /** The type of model this route serves (`text` for chat/responses/messages). */
  routeType: ModelType;
  clientProtocol: ApiProtocol;
  chooseProtocol: ProtocolChooser;
  index: OfferIndex;
  preferences: EffectivePreferences;
  reputation: ReputationSource;
  health?: OfferHealth;
  /** Measured speed, for a `throughput` or `latency` sort. */
  speed?: SpeedSource;
  /** Audit verdicts per (seller, model): a failed seller ranks last. */
  audits?: AuditSource;
  /** Seller that served earlier turns of this conversation. */
  affinityPeerId?: PeerId;
  /** Body size, checked against each seller's upload limit. */
  bodyBytes?: number;
  /** Most candidates returned (failover depth). */
  maxCandidates?: number;
  /**
   * Next-ranked candidates kept beyond `maxCandidates`, each tried only in place of a candidate
   * that could not be reached at all (the request never left the buyer).
   */
  spareCandidates?: number;
}

export interface RouteCandidate extends RankedOffer {
  sellerProtocol: ApiProtocol;
}

export interface RoutePlan {
  pinned: boolean;
  modelKey: string;
  /** Best first. */
  candidates: RouteCandidate[];
  /** True when the affinity seller was moved to the front. */
  affinityUsed: boolean;
  /** Next ranked after `candidates`, for those that cannot be reached (`spareCandidates`). */
  spares?: RouteCandidate[];
}

/** Why an offer was not used (shown in `model_not_found` details). */
export interface Exclusion {
  peerId: PeerId;
  serviceId: string;
  reason: string;
}

/** Why `offer` is not eligible, or undefined when it is. */
export function exclusionReason(
  offer: Offer,
  request: Pick<
    RouteRequest,
    'routeType' | 'clientProtocol' | 'chooseProtocol' | 'preferences' | 'bodyBytes'
  >,
  score: number | undefined,
): string | undefined {
  const prefs = request.preferences;
  if (!offer.reachable) return 'unreachable';
  if (offer.type !== request.routeType)
    return `model type is ${offer.type}, this route serves ${request.routeType}`;
  if (!request.chooseProtocol(request.clientProtocol, offer.protocols)) {
    return `speaks ${offer.protocols.join(', ')}, not ${request.clientProtocol}`;
  }
  const excluded = preferenceExclusion(offer, prefs, score);
  if (excluded) return excluded;
  if (request.bodyBytes !== undefined && request.bodyBytes > offer.uploadLimitBytes) {
    return `${UPLOAD_LIMIT_REASON}'s upload limit (${offer.uploadLimitBytes} bytes)`;
  }
  return undefined;
}

/** True when `offer` is eligible but for its unreachable mark. */
function isEligibleOnceReached(
  offer: Offer,
  request: Parameters<typeof exclusionReason>[1] & Pick<RouteRequest, 'reputation'>,
): boolean {
  const reached = { ...offer, reachable: true };
  return exclusionReason(reached, request, request.reputation.score(offer.peerId)) === undefined;
}

/**
 * Why routing preferences alone exclude `offer` (block and allow lists, trust minimum, price
 * caps), whatever the request; undefined when they admit it.
 */
export function preferenceExclusion(
  offer: Offer,
  prefs: EffectivePreferences,
  score: number | undefined,
): string | undefined {
  if (prefs.blockedPeerIds.has(offer.peerId)) return 'blocked';
  if (prefs.allowedPeerIds && !prefs.allowedPeerIds.has(offer.peerId)) return 'not in allow list';
  if (prefs.minTrustScore > 0) {
    if (score === undefined) return 'unscored';
    if (score < prefs.minTrustScore)
      return `trust score ${score} below minimum ${prefs.minTrustScore}`;
  }
  const caps = prefs.caps;
  const price = offer.price;
  if (
    caps.inputMicroPerMillion !== undefined &&
    price.inputMicroPerMillion > caps.inputMicroPerMillion
  ) {
    return 'input price above cap';
  }
  if (
    caps.outputMicroPerMillion !== undefined &&
    price.outputMicroPerMillion > caps.outputMicroPerMillion
  ) {
    return 'output price above cap';
  }
  if (
    caps.cachedInputMicroPerMillion !== undefined &&
    (price.cachedInputMicroPerMillion ?? price.inputMicroPerMillion) >
      caps.cachedInputMicroPerMillion
  ) {
    return 'cached-input price above cap';
  }
  if (
    offer.type === 'image' &&
    caps.imageMicro !== undefined &&
    BigInt(offer.rankPrice) > caps.imageMicro
  ) {
    return 'image price above cap';
  }
  if (
    offer.type === 'video' &&
    caps.videoMicro !== undefined &&
    BigInt(offer.rankPrice) > caps.videoMicro
  ) {
    return 'video price above cap';
  }
  return undefined;
}

const UPLOAD_LIMIT_REASON = 'body larger than the seller';

function notFound(model: string, request: RouteRequest, exclusions: Exclusion[]): SvcError {
  const eligible = exclusions.filter((e) => e.reason !== 'unreachable');
  if (eligible.length > 0 && eligible.every((e) => e.reason.startsWith(UPLOAD_LIMIT_REASON))) {
    return new SvcError('upload_body_too_large', {
      message: `The request body (${request.bodyBytes} bytes) is larger than every seller of "${model}" accepts. ${eligible.map((e) => `${e.peerId}: ${e.reason}`).join('; ')}.`,
      details: { model, bodyBytes: request.bodyBytes ?? null, excluded: exclusions },
    });
  }
  const key = normalizeModelName(model);
  const suggestions = closestModelNames(
    model,
    request.index.modelNames().filter((name) => normalizeModelName(name) !== key),
  );
  const hint = suggestions.length ? ` Did you mean: ${suggestions.join(', ')}?` : '';
  const reasons = exclusions.length
    ? ` Offers excluded: ${exclusions.map((e) => `${e.peerId}@${e.serviceId} (${e.reason})`).join('; ')}.`
    : ' No seller offers it.';
  return new SvcError('model_not_found', {
    message: `No seller allowed by your routing preferences offers "${model}".${reasons}${hint} The models on offer are listed by GET /v1/models (or \`svc network browse\`).`,
    details: { model, excluded: exclusions, didYouMean: suggestions },
  });
}

function checkModelAllowed(modelKey: string, model: string, prefs: EffectivePreferences): void {
  if (prefs.allowedModelKeys && !prefs.allowedModelKeys.has(modelKey)) {
    throw new SvcError('model_not_allowed', {
      message: `This key may not use model "${model}".`,
      details: { model },
    });
  }
}

function selectPinned(
  request: RouteRequest,
  target: Extract<RoutingTarget, { kind: 'pinned' }>,
): RoutePlan {
  const peerOffers = request.index.byPeer.get(target.peerId);
  if (!peerOffers) {
    throw new SvcError('peer_unreachable', {
      message: `Seller ${target.peerId} is not known to this buyer. Run \`svc network browse\` to see reachable sellers.`,
      details: { peerId: target.peerId },
    });
  }
  if (peerOffers.length > 0 && peerOffers.every((offer) => !offer.reachable)) {
    throw new SvcError('peer_unreachable', {
      message: `Seller ${target.peerId} cannot be reached. Run \`svc network browse\` to see reachable sellers.`,
      details: { peerId: target.peerId },
    });
  }
  let offer: Offer | undefined;
  if (target.model) {
    offer = request.index.offerOf(target.peerId, target.model);
  } else {
    offer = peerOffers
      .filter(
        (o) =>
          o.type === request.routeType &&
          request.chooseProtocol(request.clientProtocol, o.protocols),
      )
      .sort((a, b) => a.rankPrice - b.rankPrice)[0];
  }
  const model = target.model ?? '(any model)';
  if (!offer) {
    throw new SvcError('model_not_found', {
      message: `Seller ${target.peerId} does not offer "${model}". It offers: ${peerOffers.map((o) => o.serviceId).join(', ') || 'nothing'}. The models on offer are listed by GET /v1/models (or \`svc network browse\`).`,
      details: { peerId: target.peerId, model, offered: peerOffers.map((o) => o.serviceId) },
    });
  }
  checkModelAllowed(offer.modelKey, model, request.preferences);
  const ranked = rankedOffer(offer, {
    reputation: request.reputation,
    health: request.health ?? HEALTHY,
    preferFreeSellers: false,
    anyCachedPrice: request.index.byModel.get(offer.modelKey)?.anyCachedPrice ?? false,
    ...(request.audits ? { audits: request.audits } : {}),
  });
  const reason = exclusionReason(offer, request, ranked.reputationScore);
  if (reason) {
    if (offer.type !== request.routeType) {
      throw new SvcError('model_type_mismatch', {
        message: `"${offer.serviceId}" is a ${offer.type} model; this route serves ${request.routeType} models.`,
        details: { model: offer.serviceId, type: offer.type },
      });
    }
    throw notFound(model, request, [{ peerId: offer.peerId, serviceId: offer.serviceId, reason }]);
  }
  const sellerProtocol = request.chooseProtocol(request.clientProtocol, offer.protocols)!;
  return {
    pinned: true,
    modelKey: offer.modelKey,
    candidates: [{ ...ranked, sellerProtocol }],
    affinityUsed: false,
  };
}

/** Selects the seller(s) for a request. */
export function selectRoute(request: RouteRequest): RoutePlan {
  const target = request.target;
  if (target.kind === 'pinned') return selectPinned(request, target);
  const model = request.index.model(target.model);
  if (!model) throw notFound(target.model, request, []);
  checkModelAllowed(model.modelKey, target.model, request.preferences);

  const tried = request.maxCandidates ?? 5;
  const limit = tried + (request.spareCandidates ?? 0);
  const context = {
    reputation: request.reputation,
    health: request.health ?? HEALTHY,
    preferFreeSellers: request.preferences.preferFreeSellers,
    anyCachedPrice: model.anyCachedPrice,
    ...(request.speed ? { speed: request.speed } : {}),
    ...(request.audits ? { audits: request.audits } : {}),
  };
  const prefer = request.preferences.preferFreeSellers;
  const { sort } = request.preferences;
  const byRank = (a: RouteCandidate, b: RouteCandidate) => compareRanked(a, b, prefer, sort);
  const candidateOf = (offer: Offer): RouteCandidate => ({
    ...rankedOffer(offer, context),
    sellerProtocol: request.chooseProtocol(request.clientProtocol, offer.protocols)!,
  });
  const top: RouteCandidate[] = [];
  const cooling: RouteCandidate[] = [];
  /** Eligible but for being marked unreachable: tried only when nothing else is (below). */
  const marked: RouteCandidate[] = [];
  // Offers are in price order: under the price sort, once `limit` candidates are held, a
  // dearer offer cannot enter.
  for (const offer of offersByPrice(model)) {
    if (
      sort === 'price' &&
      top.length === limit &&
      offer.rankPrice > top[limit - 1]!.offer.rankPrice
    )
      break;
    const reason = exclusionReason(offer, request, request.reputation.score(offer.peerId));
    if (reason === 'unreachable') {
      if (marked.length < limit && isEligibleOnceReached(offer, request)) {
        marked.push(candidateOf(offer));
      }
      continue;
    }
    if (reason !== undefined) continue;
    const candidate = candidateOf(offer);
    // Cooling down, or failed this buyer's audits: only a fallback after every other seller.
    if (candidate.coolingDown || candidate.auditFailed) {
      if (cooling.length < limit) cooling.push(candidate);
      continue;
    }
    if (top.length === limit && byRank(candidate, top[limit - 1]!) >= 0) continue;
    let at = top.length;
    while (at > 0 && byRank(candidate, top[at - 1]!) < 0) at--;
    top.splice(at, 0, candidate);
    if (top.length > limit) top.pop();
  }
  if (top.length < limit && cooling.length > 0) {
    cooling.sort(byRank);
    top.push(...cooling.slice(0, limit - top.length));
  }
  // Every eligible seller is marked unreachable: the marks are a guess made from past dials and
  // record fetches (a busy or restarting seller earns one), so a fresh dial is tried rather than
  // failing a request that may well be served. A dial that succeeds clears the mark.
  if (top.length === 0 && marked.length > 0) {
    marked.sort(byRank);
    top.push(...marked);
  }
  if (top.length === 0) {
    if (!model.offers.some((offer) => offer.type === request.routeType)) {
      const type = model.offers[0]!.type;
      throw new SvcError('model_type_mismatch', {
        message: `"${target.model}" is a ${type} model; this route serves ${request.routeType} models.`,
        details: { model: target.model, type },
      });
    }
    const exclusions = model.offers.map((offer) => ({
      peerId: offer.peerId,
      serviceId: offer.serviceId,
      reason:
        exclusionReason(offer, request, request.reputation.score(offer.peerId)) ?? 'ineligible',
    }));
    throw notFound(target.model, request, exclusions);
  }
  let affinityUsed = false;
  const affinityOffer = request.affinityPeerId
    ? request.index.byPeer.get(request.affinityPeerId)?.find((o) => o.modelKey === model.modelKey)
    : undefined;
  if (
    affinityOffer &&
    exclusionReason(affinityOffer, request, request.reputation.score(affinityOffer.peerId)) ===
      undefined &&
    !(request.health ?? HEALTHY).coolingDown(affinityOffer.peerId)
  ) {
    affinityUsed = true;
    const at = top.findIndex((c) => c.offer.peerId === affinityOffer.peerId);
    if (at !== 0) {
      const affinity = at > 0 ? top.splice(at, 1)[0]! : candidateOf(affinityOffer);
      if (at < 0 && top.length === limit) top.pop();
      top.unshift(affinity);
    }
  }
  const spares = top.splice(tried);
  return {
    pinned: false,
    modelKey: model.modelKey,
    candidates: top,
    affinityUsed,
    ...(spares.length > 0 ? { spares } : {}),
  };
}
