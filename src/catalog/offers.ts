/** Offers: one per seller per normalised model, derived from verified peer metadata. */
import type { PeerId } from '../identity/index.js';
import {
  isFreePrice,
  type TokenPriceMicro,
  type TokenPricing,
  toPriceMicro,
  usdNumberToMicro,
} from '../money/index.js';
import type {
  ApiProtocol,
  KnownPeer,
  ServiceCapabilities,
  UnitBillingModel,
} from '../network/index.js';
import { type ModelType, modelTypeOf } from './modelType.js';
import { cleanModelName, normalizeModelName } from './normalizeModelName.js';

/** One seller's offer of one model. */
export interface Offer {
  peerId: PeerId;
  provider: string;
  /** The seller's own name of the model; requests are rewritten to it. */
  serviceId: string;
  /** Normalised catalog key. */
  modelKey: string;
  /** Cleaned readable name (`claude-sonnet-4`). */
  modelName: string;
  /** Every name this seller announces for the model (its cheapest one is `serviceId`). */
  aliases: readonly string[];
  type: ModelType;
  protocols: ApiProtocol[];
  pricing: TokenPricing;
  price: TokenPriceMicro;
  unitBilling: UnitBillingModel | undefined;
  /** Ranking price: micro-USD per million input+output tokens, or per image / video. */
  rankPrice: number;
  free: boolean;
  hasCachedPrice: boolean;
  capabilities: ServiceCapabilities | undefined;
  reachable: boolean;
  uploadLimitBytes: number;
  /** Where the seller is paid (`capabilities.payments`); absent for free-only sellers. */
  sellerPayments: { chainId: number; paymentsContract: string } | undefined;
  /** Ordinal of the seller in the directory (stable tie-break). */
  displayName: string;
}

interface NameInfo {
  key: string;
  clean: string;
  /** `[serviceId]`, shared by every offer with this one name (most offers): 1,000 sellers of 20
   * models held 20,000 one-element arrays (decision 155). */
  alone: readonly string[];
}

/** Names repeat across the network: normalise each spelling once. */
const NAME_CACHE = new Map<string, NameInfo>();
const PRICE_CACHE = new Map<string, PriceInfo>();
const CACHE_LIMIT = 50_000;

function nameInfo(serviceId: string): NameInfo {
  let info = NAME_CACHE.get(serviceId);
  if (!info) {
    if (NAME_CACHE.size >= CACHE_LIMIT) NAME_CACHE.clear();
    info = {
      key: normalizeModelName(serviceId),
      clean: cleanModelName(serviceId),
      alone: Object.freeze([serviceId]),
    };
    NAME_CACHE.set(serviceId, info);
  }
  return info;
}

interface PriceInfo {
  price: TokenPriceMicro;
  /** Input + output micro-USD per million, as a number for fast comparison. */
  tokenRankPrice: number;
  free: boolean;
}

const PRICE_BY_OBJECT = new WeakMap<TokenPricing, PriceInfo>();

function priceOf(pricing: TokenPricing): PriceInfo {
  let info = PRICE_BY_OBJECT.get(pricing);
  if (info) return info;
  const key = `${pricing.inputUsdPerMillion}|${pricing.outputUsdPerMillion}|${pricing.cachedInputUsdPerMillion}`;
  info = PRICE_CACHE.get(key);
  if (!info) {
    if (PRICE_CACHE.size >= CACHE_LIMIT) PRICE_CACHE.clear();
    const price = toPriceMicro(pricing);
    info = {
      price,
      tokenRankPrice: Number(price.inputMicroPerMillion + price.outputMicroPerMillion),
      free: isFreePrice(price),
    };
    PRICE_CACHE.set(key, info);
  }
  PRICE_BY_OBJECT.set(pricing, info);
  return info;
}

function rankPriceOf(type: ModelType, tokenRankPrice: number, unit?: UnitBillingModel): number {
  if (type === 'image' && unit?.imageUsd !== undefined)
    return Number(usdNumberToMicro(unit.imageUsd));
  if (type === 'video' && unit?.videoUsd !== undefined)
    return Number(usdNumberToMicro(unit.videoUsd));
  return tokenRankPrice;
}

/** Offers computed from one signed record (records are immutable; reachability is not). */
const OFFERS_BY_RECORD = new WeakMap<object, { reachable: boolean; offers: Offer[] }>();

/** Offers of one peer, cheapest alias per model kept. Malformed prices drop just that service. */
export function offersOfPeer(peer: KnownPeer): Offer[] {
  const { metadata } = peer;
  const cached = OFFERS_BY_RECORD.get(metadata);
  if (cached && cached.reachable === peer.reachable) return cached.offers;
  const byKey = new Map<string, Offer>();
  for (const announcement of metadata.providers) {
    for (const serviceId of announcement.services) {
      let offer: Offer;
      try {
        const pricing = announcement.servicePricing?.[serviceId] ?? announcement.defaultPricing;
        const protocols = announcement.serviceApiProtocols?.[serviceId] ?? [
          'openai-chat-completions',
        ];
        const type = modelTypeOf(announcement.serviceCategories?.[serviceId] ?? [], protocols);
        const unitBilling = announcement.serviceUnitBillingModels?.[serviceId];
        const { price, tokenRankPrice, free } = priceOf(pricing);
        const names = nameInfo(serviceId);
        const unitFree = (unitBilling?.imageUsd ?? 0) === 0 && (unitBilling?.videoUsd ?? 0) === 0;
        const capabilities = announcement.serviceCapabilities?.[serviceId];
        offer = {
          peerId: metadata.peerId,
          provider: announcement.provider,
          serviceId,
          modelKey: names.key,
          modelName: names.clean,
          aliases: names.alone,
          type,
          protocols,
          pricing,
          price,
          unitBilling,
          rankPrice: rankPriceOf(type, tokenRankPrice, unitBilling),
          free: free && unitFree,
          hasCachedPrice: pricing.cachedInputUsdPerMillion !== undefined,
          capabilities,
          reachable: peer.reachable,
          uploadLimitBytes: metadata.capabilities.uploadLimitBytes,
          sellerPayments: metadata.capabilities.payments,
          displayName: metadata.displayName,
        };
      } catch {
        continue;
      }
      const existing = byKey.get(offer.modelKey);
      if (!existing) {
        byKey.set(offer.modelKey, offer);
      } else if (offer.rankPrice < existing.rankPrice) {
        offer.aliases = [...existing.aliases, serviceId];
        byKey.set(offer.modelKey, offer);
      } else {
        existing.aliases = [...existing.aliases, serviceId];
      }
    }
  }
  const offers = [...byKey.values()];
  OFFERS_BY_RECORD.set(metadata, { reachable: peer.reachable, offers });
  return offers;
}
