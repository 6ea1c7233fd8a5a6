/** Offers: one per seller per normalised model, derived from verified peer metadata (spec 2.4). */
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
  aliases: string[];
  type: ModelType;
  protocols: ApiProtocol[];
  pricing: TokenPricing;
  price: TokenPriceMicro;
  unitBilling?: UnitBillingModel;
  /** Ranking price: micro-USD per million input+output tokens, or per image / video. */
  rankPrice: number;
  free: boolean;
  hasCachedPrice: boolean;
  capabilities?: ServiceCapabilities;
  reachable: boolean;
  uploadLimitBytes: number;
  /** Ordinal of the seller in the directory (stable tie-break). */
  displayName: string;
}

/** Names repeat across the network: normalise each spelling once. */
const NAME_CACHE = new Map<string, { key: string; clean: string }>();
const PRICE_CACHE = new Map<string, TokenPriceMicro>();
const CACHE_LIMIT = 50_000;

function nameInfo(serviceId: string): { key: string; clean: string } {
  let info = NAME_CACHE.get(serviceId);
  if (!info) {
    if (NAME_CACHE.size >= CACHE_LIMIT) NAME_CACHE.clear();
    info = { key: normalizeModelName(serviceId), clean: cleanModelName(serviceId) };
    NAME_CACHE.set(serviceId, info);
  }
  return info;
}

function priceOf(pricing: TokenPricing): TokenPriceMicro {
  const key = `${pricing.inputUsdPerMillion}|${pricing.outputUsdPerMillion}|${pricing.cachedInputUsdPerMillion}`;
  let price = PRICE_CACHE.get(key);
  if (!price) {
    if (PRICE_CACHE.size >= CACHE_LIMIT) PRICE_CACHE.clear();
    price = toPriceMicro(pricing);
    PRICE_CACHE.set(key, price);
  }
  return price;
}

function rankPriceOf(type: ModelType, price: TokenPriceMicro, unit?: UnitBillingModel): number {
  if (type === 'image' && unit?.imageUsd !== undefined)
    return Number(usdNumberToMicro(unit.imageUsd));
  if (type === 'video' && unit?.videoUsd !== undefined)
    return Number(usdNumberToMicro(unit.videoUsd));
  return Number(price.inputMicroPerMillion + price.outputMicroPerMillion);
}

/** Offers of one peer, cheapest alias per model kept. Malformed prices drop just that service. */
export function offersOfPeer(peer: KnownPeer): Offer[] {
  const { metadata } = peer;
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
        const price = priceOf(pricing);
        const names = nameInfo(serviceId);
        const unitFree = (unitBilling?.imageUsd ?? 0) === 0 && (unitBilling?.videoUsd ?? 0) === 0;
        const capabilities = announcement.serviceCapabilities?.[serviceId];
        offer = {
          peerId: metadata.peerId,
          provider: announcement.provider,
          serviceId,
          modelKey: names.key,
          modelName: names.clean,
          aliases: [serviceId],
          type,
          protocols: [...protocols],
          pricing,
          price,
          ...(unitBilling ? { unitBilling } : {}),
          rankPrice: rankPriceOf(type, price, unitBilling),
          free: isFreePrice(price) && unitFree,
          hasCachedPrice: pricing.cachedInputUsdPerMillion !== undefined,
          ...(capabilities ? { capabilities } : {}),
          reachable: peer.reachable,
          uploadLimitBytes: metadata.capabilities.uploadLimitBytes,
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
        existing.aliases.push(serviceId);
      }
    }
  }
  return [...byKey.values()];
}
