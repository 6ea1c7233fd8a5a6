/**
 * Token prices and request cost. Prices are advertised in USD per million tokens and kept as
 * integer micro-USD per million tokens (i.e. pico-USD per token), so a price like 0.15 USD/M
 * is 150_000n exactly.
 *
 * Rounding rule (the only one in the codebase): the cost of a request is computed exactly in
 * micro-USD-per-million units, summed over input, cached input and output, and divided by one
 * million ONCE, rounding UP to the next whole micro-USD. A seller is never paid less than its
 * advertised price; a buyer overpays by less than one micro-USD per request.
 */
import { ceilDiv, type MicroUsd, usdNumberToMicro } from './microUsd.js';

const TOKENS_PER_MILLION = 1_000_000n;

/** A price in micro-USD per million tokens. */
export type MicroUsdPerMillion = bigint;

/** Token pricing as it appears on the wire, in USD per million tokens. */
export interface TokenPricing {
  inputUsdPerMillion: number;
  outputUsdPerMillion: number;
  cachedInputUsdPerMillion?: number;
}

/** Token pricing as exact integers. */
export interface TokenPriceMicro {
  inputMicroPerMillion: MicroUsdPerMillion;
  outputMicroPerMillion: MicroUsdPerMillion;
  /** Absent when the seller does not advertise a cached-input price (cached tokens then bill as input). */
  cachedInputMicroPerMillion?: MicroUsdPerMillion;
}

/** Token usage of one request. `cachedInputTokens` is part of `inputTokens`, not added to it. */
export interface TokenUsage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /**
   * Of `outputTokens`, the reasoning the client never sees (OpenAI `reasoning_tokens`). Billed as
   * output; the buyer cannot count it, so it checks only the visible rest (decision 033).
   */
  reasoningTokens?: number;
}

/** Converts wire pricing (numbers, USD per million) to exact integer pricing. */
export function toPriceMicro(pricing: TokenPricing): TokenPriceMicro {
  const price: TokenPriceMicro = {
    inputMicroPerMillion: usdNumberToMicro(pricing.inputUsdPerMillion),
    outputMicroPerMillion: usdNumberToMicro(pricing.outputUsdPerMillion),
  };
  if (pricing.cachedInputUsdPerMillion !== undefined) {
    price.cachedInputMicroPerMillion = usdNumberToMicro(pricing.cachedInputUsdPerMillion);
  }
  return price;
}

function tokens(count: number, field: string): bigint {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`${field} must be a non-negative integer, got ${count}`);
  }
  return BigInt(count);
}

/** Cost of a request in micro-USD, rounded up once (see the rounding rule above). */
export function costOfUsage(usage: TokenUsage, price: TokenPriceMicro): MicroUsd {
  const input = tokens(usage.inputTokens, 'inputTokens');
  const cached = tokens(usage.cachedInputTokens, 'cachedInputTokens');
  const output = tokens(usage.outputTokens, 'outputTokens');
  if (cached > input) throw new RangeError('cachedInputTokens cannot exceed inputTokens');
  const cachedPrice = price.cachedInputMicroPerMillion ?? price.inputMicroPerMillion;
  const scaled =
    (input - cached) * price.inputMicroPerMillion +
    cached * cachedPrice +
    output * price.outputMicroPerMillion;
  return ceilDiv(scaled, TOKENS_PER_MILLION);
}

/** Upper bound of a request's cost given its input size and the most output it may produce. */
export function maxCostOfRequest(
  inputTokens: number,
  maxOutputTokens: number,
  price: TokenPriceMicro,
): MicroUsd {
  return costOfUsage({ inputTokens, cachedInputTokens: 0, outputTokens: maxOutputTokens }, price);
}

/**
 * The largest number of output tokens whose cost, with `inputTokens` of input, stays within
 * `budget`. Returns 0 when even the input alone does not fit.
 */
export function maxOutputTokensWithin(
  budget: MicroUsd,
  inputTokens: number,
  price: TokenPriceMicro,
): number {
  const inputCost = tokens(inputTokens, 'inputTokens') * price.inputMicroPerMillion;
  const room = budget * TOKENS_PER_MILLION - inputCost;
  if (room < 0n) return 0;
  if (price.outputMicroPerMillion === 0n) return Number.MAX_SAFE_INTEGER;
  const result = room / price.outputMicroPerMillion;
  return result > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(result);
}

/** Sum of input and output price, the ranking key of automatic routing. */
export function rankingPrice(price: TokenPriceMicro): MicroUsdPerMillion {
  return price.inputMicroPerMillion + price.outputMicroPerMillion;
}

/** True when the seller charges nothing for tokens. */
export function isFreePrice(price: TokenPriceMicro): boolean {
  return (
    price.inputMicroPerMillion === 0n &&
    price.outputMicroPerMillion === 0n &&
    (price.cachedInputMicroPerMillion ?? 0n) === 0n
  );
}
