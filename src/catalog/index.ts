/** Catalog: model-name normalisation, offers per seller, offer ranking and catalog entries. */
export {
  buildCatalog,
  type CatalogCapabilities,
  type CatalogEntry,
  type CatalogOptions,
  type CatalogPeer,
  catalogEntries,
  catalogEntry,
} from './buildCatalog.js';
export { type ModelType, modelTypeOf, TYPE_FILTERS } from './modelType.js';
export {
  cleanModelName,
  closestModelNames,
  editDistance,
  normalizeModelName,
} from './normalizeModelName.js';
export { type ModelOffers, OfferIndex, offersByPrice } from './offerIndex.js';
export { type Offer, offersOfPeer } from './offers.js';
export {
  type AuditSource,
  compareRanked,
  effectiveReputation,
  HEALTHY,
  type OfferAudit,
  type OfferHealth,
  type OfferSpeed,
  type RankContext,
  type RankedOffer,
  rankedOffer,
  rankOffers,
  type SpeedSource,
} from './rankOffers.js';
export { NO_REPUTATION, type ReputationSource, staticReputation } from './reputation.js';
