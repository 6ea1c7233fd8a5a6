/** Catalog entries: one per normalised model, aggregated over every seller's offer. */
import type { PeerId } from '../identity/index.js';
import type { TokenPricing } from '../money/index.js';
import type { ApiProtocol, ServiceCapabilities, UnitBillingModel } from '../network/index.js';
import type { ModelType } from './modelType.js';
import type { ModelOffers, OfferIndex } from './offerIndex.js';
import type { Offer } from './offers.js';
import {
  type AuditSource,
  HEALTHY,
  type OfferAudit,
  type OfferHealth,
  rankOffers,
  type SpeedSource,
} from './rankOffers.js';
import type { ReputationSource } from './reputation.js';

/** One item of `peers`. */
export interface CatalogPeer {
  peerId: PeerId;
  provider: string;
  serviceId: string;
  protocols: ApiProtocol[];
  prices: TokenPricing & UnitBillingModel;
  reputationScore: number | null;
  effectiveReputationScore: number | null;
  capabilities: ServiceCapabilities;
  /** Measured by this buyer (moving averages of its own traffic); null until measured. */
  ttftMs: number | null;
  outputTokensPerSecond: number | null;
  /** This buyer's audit verdict on the seller's model (docs/decisions/153-model-audits.md); null until audited. */
  audit: OfferAudit | null;
  /**
   * The buyer's own routing preferences admit the offer (trust minimum, price caps, allow and
   * block lists): a gateway prices reservations only at offers routing may use
   * (docs/decisions/169-reservations-priced-at-the-route.md).
   */
  eligible: boolean;
}

/** Features every seller guarantees (snake_case like the rest of the entry). */
export interface CatalogCapabilities {
  tool_use?: boolean;
  input_modalities?: string[];
  output_modalities?: string[];
}

/** A catalog model entry in the OpenAI list-item shape. */
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

const NO_CAPABILITIES: ServiceCapabilities = Object.freeze({});

export interface CatalogOptions {
  reputation: ReputationSource;
  health?: OfferHealth;
  preferFreeSellers?: boolean;
  speed?: SpeedSource;
  audits?: AuditSource;
  /** Whether routing's own preferences admit an offer (default: every offer). */
  admits?: (offer: Offer, reputationScore: number | undefined) => boolean;
}

/** The most common cleaned name of a model's offers (ties: shortest, then alphabetical). */
function entryId(offers: readonly Offer[]): string {
  const counts = new Map<string, number>();
  for (const offer of offers) counts.set(offer.modelName, (counts.get(offer.modelName) ?? 0) + 1);
  return [...counts.entries()].sort(
    (a, b) => b[1] - a[1] || a[0].length - b[0].length || a[0].localeCompare(b[0]),
  )[0]![0];
}

/** What every offer of a model agrees on, and how many offers state each field. */
interface MergedCapabilities {
  covered: {
    context: number;
    maxOut: number;
    arch: number;
    caps: number;
    params: number;
    tool: number;
    inputs: number;
    outputs: number;
  };
  contextLength: number | undefined;
  maxOutput: number | undefined;
  architecture: string | undefined;
  parameters: string[] | undefined;
  capabilities: CatalogCapabilities;
}

/**
 * Merges the offers' capabilities: the smallest context and output limits, the parameters and
 * modalities all support, a field only when every offer states it. One pass, since this runs for
 * every model on every rebuild.
 */
function mergedCapabilities(caps: ServiceCapabilities[]): MergedCapabilities {
  let contextLength: number | undefined;
  let maxOutput: number | undefined;
  let architecture: string | undefined;
  let parameters: string[] | undefined;
  let inputs: string[] | undefined;
  let outputs: string[] | undefined;
  let toolUseAll = true;
  const covered = {
    context: 0,
    maxOut: 0,
    arch: 0,
    caps: 0,
    params: 0,
    tool: 0,
    inputs: 0,
    outputs: 0,
  };
  let architectureSame = true;
  for (const c of caps) {
    if (c.contextLength !== undefined) {
      covered.context++;
      contextLength = Math.min(contextLength ?? c.contextLength, c.contextLength);
    }
    if (c.maxOutputTokens !== undefined) {
      covered.maxOut++;
      maxOutput = Math.min(maxOutput ?? c.maxOutputTokens, c.maxOutputTokens);
    }
    if (c.architecture !== undefined) {
      if (covered.arch > 0 && c.architecture !== architecture) architectureSame = false;
      covered.arch++;
      architecture = c.architecture;
    }
    if (c.supportedParameters) {
      covered.params++;
      const list = c.supportedParameters;
      parameters = parameters ? parameters.filter((p) => list.includes(p)) : [...list];
    }
    if (c.toolUse !== undefined) {
      covered.tool++;
      toolUseAll &&= c.toolUse;
    }
    if (c.inputModalities) {
      covered.inputs++;
      const list = c.inputModalities;
      inputs = inputs ? inputs.filter((m) => list.includes(m)) : [...list];
    }
    if (c.outputModalities) {
      covered.outputs++;
      const list = c.outputModalities;
      outputs = outputs ? outputs.filter((m) => list.includes(m)) : [...list];
    }
    if (c.toolUse !== undefined || c.inputModalities || c.outputModalities) covered.caps++;
  }
  const all = caps.length;
  const capabilities: CatalogCapabilities = {};
  if (covered.tool === all) capabilities.tool_use = toolUseAll;
  if (covered.inputs === all && inputs) capabilities.input_modalities = inputs;
  if (covered.outputs === all && outputs) capabilities.output_modalities = outputs;
  if (covered.context < all) contextLength = undefined;
  if (covered.maxOut < all) maxOutput = undefined;
  if (covered.arch < all || !architectureSame) architecture = undefined;
  if (covered.params < all) parameters = undefined;
  return { covered, contextLength, maxOutput, architecture, parameters, capabilities };
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
    ...(options.speed ? { speed: options.speed } : {}),
    ...(options.audits ? { audits: options.audits } : {}),
    anyCachedPrice: model.anyCachedPrice,
  });
  const caps = offers.map((offer) => offer.capabilities ?? NO_CAPABILITIES);
  const id = entryId(offers);
  const aliases = [...new Set(offers.flatMap((offer) => offer.aliases))]
    .filter((alias) => alias !== id)
    .sort();
  const protocols = [...new Set(offers.flatMap((offer) => offer.protocols))].sort();
  const types = new Set(offers.map((offer) => offer.type));

  const { covered, contextLength, maxOutput, architecture, parameters, capabilities } =
    mergedCapabilities(caps);

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
      context_length: covered.context,
      max_output_tokens: covered.maxOut,
      architecture: covered.arch,
      capabilities: covered.caps,
      supported_parameters: covered.params,
    },
    peers: ranked.map(({ offer, reputationScore, effectiveReputationScore, speed, audit }) => ({
      peerId: offer.peerId,
      provider: offer.provider,
      serviceId: offer.serviceId,
      protocols: offer.protocols,
      prices: offer.unitBilling ? { ...offer.pricing, ...offer.unitBilling } : offer.pricing,
      reputationScore: reputationScore ?? null,
      effectiveReputationScore: effectiveReputationScore ?? null,
      capabilities: offer.capabilities ?? NO_CAPABILITIES,
      ttftMs: speed?.ttftMs === undefined ? null : Math.round(speed.ttftMs),
      outputTokensPerSecond:
        speed?.outputTokensPerSecond === undefined
          ? null
          : Math.round(speed.outputTokensPerSecond * 10) / 10,
      audit: audit ?? null,
      eligible: options.admits ? options.admits(offer, reputationScore) : true,
    })),
  };
  if (contextLength !== undefined) entry.context_length = contextLength;
  if (maxOutput !== undefined) entry.max_output_tokens = maxOutput;
  if (architecture !== undefined) entry.architecture = architecture;
  if (Object.keys(capabilities).length > 0) entry.capabilities = capabilities;
  if (parameters) entry.supported_parameters = parameters;
  return entry;
}

/**
 * Every model of the index, sorted by id, built one at a time as the caller takes them: a
 * catalog of many sellers is written out without every entry alive at once
 * (docs/decisions/155-buyer-memory-with-many-peers.md).
 */
export function* catalogEntries(
  index: OfferIndex,
  options: CatalogOptions,
): Generator<CatalogEntry> {
  const order: { id: string; model: ModelOffers }[] = [];
  for (const model of index.byModel.values()) {
    const offers = model.offers.filter((offer) => offer.reachable);
    if (offers.length > 0) order.push({ id: entryId(offers), model });
  }
  order.sort((a, b) => a.id.localeCompare(b.id));
  for (const { model } of order) {
    const entry = catalogEntry(model, options);
    if (entry) yield entry;
  }
}

/** Every model of the index, sorted by id. */
export function buildCatalog(index: OfferIndex, options: CatalogOptions): CatalogEntry[] {
  return [...catalogEntries(index, options)];
}
