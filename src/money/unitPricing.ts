/**
 * Per-unit prices (one image, one video) in the token-price shape the payments seam speaks:
 * a unit is billed as one "output token" priced at `unit × 1,000,000` per million, so
 * `costOfUsage(unitUsage(n), unitPriceMicro(u)) === n × u` exactly, and buyer and seller
 * payments need no second pricing model (decision 091).
 */
import type { MicroUsd } from './microUsd.js';
import type { TokenPriceMicro, TokenPricing, TokenUsage } from './pricing.js';

const MILLION = 1_000_000n;

/** Exact price of `units` at `unitMicro` each, as a token price. */
export function unitPriceMicro(unitMicro: MicroUsd): TokenPriceMicro {
  return { inputMicroPerMillion: 0n, outputMicroPerMillion: unitMicro * MILLION };
}

/** The same price as announced-style numbers (USD per million "units"). */
export function unitPricing(unitUsd: number): TokenPricing {
  return { inputUsdPerMillion: 0, outputUsdPerMillion: unitUsd * 1_000_000 };
}

/** Usage of `units` billed units. */
export function unitUsage(units: number): TokenUsage {
  return { inputTokens: 0, cachedInputTokens: 0, outputTokens: units };
}
