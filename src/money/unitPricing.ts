/**
 * Per-unit prices (one image, one video) in the token-price shape the payments seam speaks
 * (decision 091): a unit is billed as UNIT_TOKENS "output tokens", priced so that
 * `costOfUsage(unitUsage(n), unitPriceMicro(u)) === n × u` exactly. A unit is many tokens so
 * the buyer's claim tolerance (a few tokens of slack) never covers a whole extra unit.
 */
import type { MicroUsd } from './microUsd.js';
import type { TokenPriceMicro, TokenPricing, TokenUsage } from './pricing.js';

/** Billing tokens per unit. */
export const UNIT_TOKENS = 1000;
const UNIT = BigInt(UNIT_TOKENS);
const MILLION = 1_000_000n;

/** Exact price per unit of `unitMicro`, as a token price. */
export function unitPriceMicro(unitMicro: MicroUsd): TokenPriceMicro {
  return { inputMicroPerMillion: 0n, outputMicroPerMillion: (unitMicro * MILLION) / UNIT };
}

/** The same price as announced-style numbers (USD per million billing tokens). */
export function unitPricing(unitUsd: number): TokenPricing {
  return { inputUsdPerMillion: 0, outputUsdPerMillion: (unitUsd * 1_000_000) / UNIT_TOKENS };
}

/** Usage of `units` billed units. */
export function unitUsage(units: number): TokenUsage {
  return { inputTokens: 0, cachedInputTokens: 0, outputTokens: units * UNIT_TOKENS };
}

/** Units in a usage made by `unitUsage`. */
export function unitsOf(usage: TokenUsage): number {
  return Math.floor(usage.outputTokens / UNIT_TOKENS);
}
