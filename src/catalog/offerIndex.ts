/** Offers indexed by normalised model and by seller, rebuilt when the peer cache changes. */
import type { PeerId } from '../identity/index.js';
import type { KnownPeer } from '../network/index.js';
import { normalizeModelName } from './normalizeModelName.js';
import { type Offer, offersOfPeer } from './offers.js';

/** Every offer of one normalised model. */
export interface ModelOffers {
  modelKey: string;
  offers: Offer[];
  /** True when at least one seller of the model advertises a cached-input price. */
  anyCachedPrice: boolean;
  /** True while `offers` is in ascending ranking-price order. */
  sortedByPrice: boolean;
}

/** The offers of a model, cheapest first (sorted once, on first use). */
export function offersByPrice(model: ModelOffers): Offer[] {
  if (!model.sortedByPrice) {
    model.offers.sort((a, b) => a.rankPrice - b.rankPrice);
    model.sortedByPrice = true;
  }
  return model.offers;
}

/** Offers by model key and by peer. */
export class OfferIndex {
  readonly byModel = new Map<string, ModelOffers>();
  readonly byPeer = new Map<PeerId, Offer[]>();

  /** Indexes the offers of every cached peer (unreachable ones too; routing skips them). */
  static fromPeers(peers: Iterable<KnownPeer>): OfferIndex {
    const index = new OfferIndex();
    for (const peer of peers) index.addOffers(peer.metadata.peerId, offersOfPeer(peer));
    return index;
  }

  /** Adds one seller's offers. */
  addOffers(peerId: PeerId, offers: Offer[]): void {
    this.byPeer.set(peerId, offers);
    for (const offer of offers) {
      let model = this.byModel.get(offer.modelKey);
      if (!model) {
        model = {
          modelKey: offer.modelKey,
          offers: [],
          anyCachedPrice: false,
          sortedByPrice: true,
        };
        this.byModel.set(offer.modelKey, model);
      }
      model.offers.push(offer);
      model.sortedByPrice = false;
      if (offer.hasCachedPrice) model.anyCachedPrice = true;
    }
  }

  /** The offers of a model by any spelling of its name. */
  model(name: string): ModelOffers | undefined {
    return this.byModel.get(normalizeModelName(name));
  }

  /** A seller's offer of a model (by any spelling), or its exact service id. */
  offerOf(peerId: PeerId, name: string): Offer | undefined {
    const offers = this.byPeer.get(peerId);
    if (!offers) return undefined;
    const exact = offers.find((offer) => offer.aliases.includes(name));
    if (exact) return exact.serviceId === name ? exact : { ...exact, serviceId: name };
    const key = normalizeModelName(name);
    return offers.find((offer) => offer.modelKey === key);
  }

  /** One readable name per model (for "did you mean"). */
  modelNames(): string[] {
    return [...this.byModel.values()].map((model) => model.offers[0]!.modelName);
  }
}
