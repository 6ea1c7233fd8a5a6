/** Catalog entries (spec 2.3): one per normalised model, aggregated over every seller's offer. */
import type { PeerId } from '../identity/index.js';
import type { TokenPricing } from '../money/index.js';
import type { ApiProtocol, ServiceCapabilities, UnitBillingModel } from '../network/index.js';
import type { ModelType } from './modelType.js';
import type { ModelOffers, OfferIndex } from './offerIndex.js';
import type { Offer } from './offers.js';
import { HEALTHY, type OfferHealth, rankOffers } from './rankOffers.js';
import type { ReputationSource } from './reputation.js';

/** One item of `peers` (spec 2.3). */
export interface CatalogPeer {
  peerId: PeerId;
  provider: string;
  serviceId: string;
  protocols: ApiProtocol[];
  prices: TokenPricing & UnitBillingModel;
  reputationScore: number | null;
  effectiveReputationScore: number | null;
  capabilities: ServiceCapabilities;
}

/** Features every seller guarantees (snake_case like the rest of the entry). */
export interface CatalogCapabilities {
  tool_use?: boolean;
  input_modalities?: string[];
  output_modalities?: string[];
}

/** A catalog model entry (spec 2.3) in the OpenAI list-item shape. */
export interface CatalogEntry {
  id: string;
  object: 'model';
  owned_by: string;
  name: string;
  aliases: string[];
  type: ModelType;
  supported_protocols: ApiProtocol[];
  context_length?: number;
  max_output_tokens?: number;
  architecture?: string;
  capabilities?: CatalogCapabilities;
  supported_parameters?: string[];
  capability_coverage: Record<string, number>;
  peers: CatalogPeer[];
}

export interface CatalogOptions {
  reputation: ReputationSource;
  health?: OfferHealth;
  preferFreeSellers?: boolean;
}

function minOf(values: Array<number | undefined>): number | undefined {
  if (values.some((value) => value === undefined)) return undefined;
  return Math.min(...(values as number[]));
}

function intersect(lists: Array<string[] | undefined>): string[] | undefined {
  if (lists.length === 0 || lists.some((list) => list === undefined)) return undefined;
  const [first, ...rest] = lists as string[][];
  return first!.filter((item) => rest.every((list) => list.includes(item)));
}

function count<T>(values: T[]): number {
  return values.filter((value) => value !== undefined).length;
}

/** The most common cleaned name of a model's offers (ties: shortest, then alphabetical). */
function entryId(offers: readonly Offer[]): string {
  const counts = new Map<string, number>();
  for (const offer of offers) counts.set(offer.modelName, (counts.get(offer.modelName) ?? 0) + 1);
  return [...counts.entries()].sort(
    (a, b) => b[1] - a[1] || a[0].length - b[0].length || a[0].localeCompare(b[0]),
  )[0]![0];
}

/** Builds the entry of one model from its reachable offers; undefined when none is reachable. */
export function catalogEntry(
  model: ModelOffers,
  options: CatalogOptions,
): CatalogEntry | undefined {
  const offers = model.offers.filter((offer) => offer.reachable);
  if (offers.length === 0) return undefined;
  const ranked = rankOffers(offers, {
    reputation: options.reputation,
    health: options.health ?? HEALTHY,
    preferFreeSellers: options.preferFreeSellers ?? false,
    anyCachedPrice: model.anyCachedPrice,
  });
  const caps = offers.map((offer) => offer.capabilities ?? {});
  const id = entryId(offers);
  const aliases = [...new Set(offers.flatMap((offer) => offer.aliases))]
    .filter((alias) => alias !== id)
    .sort();
  const protocols = [...new Set(offers.flatMap((offer) => offer.protocols))].sort();
  const types = new Set(offers.map((offer) => offer.type));

  const contextLength = minOf(caps.map((c) => c.contextLength));
  const maxOutput = minOf(caps.map((c) => c.maxOutputTokens));
  const architectures = caps.map((c) => c.architecture);
  const architecture =
    count(architectures) === caps.length && new Set(architectures).size === 1
      ? architectures[0]
      : undefined;
  const parameters = intersect(caps.map((c) => c.supportedParameters));
  const toolUses = caps.map((c) => c.toolUse);
  const capabilities: CatalogCapabilities = {};
  if (count(toolUses) === caps.length) capabilities.tool_use = toolUses.every(Boolean);
  const inputs = intersect(caps.map((c) => c.inputModalities));
  if (inputs) capabilities.input_modalities = inputs;
  const outputs = intersect(caps.map((c) => c.outputModalities));
  if (outputs) capabilities.output_modalities = outputs;

  const entry: CatalogEntry = {
    id,
    object: 'model',
    owned_by: 'svc-network',
    name: id,
    aliases,
    // Offers of one name normally agree; a mixed set is reported by its first-ranked offer.
    type: types.size === 1 ? offers[0]!.type : ranked[0]!.offer.type,
    supported_protocols: protocols,
    capability_coverage: {
      offers: offers.length,
      context_length: count(caps.map((c) => c.contextLength)),
      max_output_tokens: count(caps.map((c) => c.maxOutputTokens)),
      architecture: count(architectures),
      capabilities: caps.filter(
        (c) => c.toolUse !== undefined || c.inputModalities || c.outputModalities,
      ).length,
      supported_parameters: count(caps.map((c) => c.supportedParameters)),
    },
    peers: ranked.map(({ offer, reputationScore, effectiveReputationScore }) => ({
      peerId: offer.peerId,
      provider: offer.provider,
      serviceId: offer.serviceId,
      protocols: offer.protocols,
      prices: { ...offer.pricing, ...(offer.unitBilling ?? {}) },
      reputationScore: reputationScore ?? null,
      effectiveReputationScore: effectiveReputationScore ?? null,
      capabilities: offer.capabilities ?? {},
    })),
  };
  if (contextLength !== undefined) entry.context_length = contextLength;
  if (maxOutput !== undefined) entry.max_output_tokens = maxOutput;
  if (architecture !== undefined) entry.architecture = architecture;
  if (Object.keys(capabilities).length > 0) entry.capabilities = capabilities;
  if (parameters) entry.supported_parameters = parameters;
  return entry;
}

/** Every model of the index, sorted by id. */
export function buildCatalog(index: OfferIndex, options: CatalogOptions): CatalogEntry[] {
  const entries: CatalogEntry[] = [];
  for (const model of index.byModel.values()) {
    const entry = catalogEntry(model, options);
    if (entry) entries.push(entry);
  }
  return entries.sort((a, b) => a.id.localeCompare(b.id));
}
