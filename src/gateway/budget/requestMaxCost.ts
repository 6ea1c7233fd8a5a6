/**
 * The most one request can cost (docs/decisions/121-reservations-sized-to-the-request.md): its
 * counted input (with a margin for the buyer's own count) plus its max output tokens, or a default
 * cap when it sets none, at the highest price among the offers routing may pick. Pure.
 */
import { estimateInputTokens, formatOfPath, maxOutputTokensOf } from '../../formats/index.js';
import { type MicroUsd, maxCostOfRequest, type TokenPriceMicro } from '../../money/index.js';

/** Output tokens reserved for a request that sets no max tokens (README "Budgets"). */
export const DEFAULT_OUTPUT_CAP = 4_096;

/** Input estimate margin: the buyer counts input with its own rules; never reserve below them. */
function withMargin(tokens: number): number {
  return Math.ceil(tokens * 1.25) + 64;
}

/**
 * The reservation for `body` on `path`, or null when it cannot be sized (not a text route, or
 * a body the formats cannot read): the caller then reserves its configured maximum.
 */
export function requestMaxCost(
  path: string,
  body: Record<string, unknown>,
  price: TokenPriceMicro,
): MicroUsd | null {
  const format = formatOfPath(path.split('?')[0] ?? path);
  if (!format) return null;
  let input: number;
  try {
    input = estimateInputTokens(format, body);
  } catch {
    return null;
  }
  const requested = maxOutputTokensOf(format, body);
  const output =
    requested !== undefined && Number.isSafeInteger(requested) && requested > 0
      ? requested
      : DEFAULT_OUTPUT_CAP;
  return maxCostOfRequest(withMargin(input), output, price);
}
