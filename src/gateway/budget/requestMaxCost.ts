/**
 * The most one request can cost (docs/decisions/121-reservations-sized-to-the-request.md): its
 * counted input (with a margin for the buyer's own count) plus its max output tokens, or a default
 * cap when it sets none, at the highest price among the offers routing may pick. Pure.
 */
import {
  estimateInputTokens,
  formatOfPath,
  inputTokensBound,
  maxOutputTokensOf,
} from '../../formats/index.js';
import { type MicroUsd, maxCostOfRequest, type TokenPriceMicro } from '../../money/index.js';

/** Output tokens reserved for a request that sets no max tokens (README "Budgets"). */
export const DEFAULT_OUTPUT_CAP = 4_096;

/** Input estimate margin: the buyer counts input with its own rules; never reserve below them. */
function withMargin(tokens: number): number {
  return Math.ceil(tokens * 1.25) + 64;
}

/** How a request's input tokens are sized: counted, or bounded by its texts' bytes. */
type InputSizing = 'counted' | 'bound';

function sizedCost(
  path: string,
  body: Record<string, unknown>,
  price: TokenPriceMicro,
  sizing: InputSizing,
): MicroUsd | null {
  const format = formatOfPath(path.split('?')[0] ?? path);
  if (!format) return null;
  let input: number;
  try {
    // Free input costs nothing whatever its count (`maxCostOfRequest` prices every input token
    // at the input price): the bound, which reads the body as counting does, is enough.
    input =
      sizing === 'bound' || price.inputMicroPerMillion === 0n
        ? inputTokensBound(format, body)
        : estimateInputTokens(format, body);
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

/**
 * The reservation for `body` on `path`, or null when it cannot be sized (not a text route, or
 * a body the formats cannot read): the caller then reserves its configured maximum.
 */
export function requestMaxCost(
  path: string,
  body: Record<string, unknown>,
  price: TokenPriceMicro,
): MicroUsd | null {
  return sizedCost(path, body, price, 'counted');
}

/**
 * An upper bound of `requestMaxCost` that counts no tokens: the input's tokens are bounded by its
 * texts' UTF-8 bytes (`inputTokensBound`), and the margin and prices grow with the count, so it
 * is never below `requestMaxCost` (docs/decisions/159-gateway-auth-and-sizing-without-counting.md).
 * Null exactly when `requestMaxCost` is null.
 */
export function requestMaxCostBound(
  path: string,
  body: Record<string, unknown>,
  price: TokenPriceMicro,
): MicroUsd | null {
  return sizedCost(path, body, price, 'bound');
}
