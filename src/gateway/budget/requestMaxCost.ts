/**
 * The most one request can cost (docs/decisions/121-reservations-sized-to-the-request.md): its
 * counted input (with a margin for the buyer's own count) plus its max output tokens, or the
 * default the buyer asks for when it sets none (docs/decisions/170-max-tokens-under-a-cost-cap.md),
 * at a price of an offer routing may pick. Pure.
 */
import {
  countRequestTokens,
  formatOfPath,
  maxOutputTokensOf,
  parseRequest,
  requestTokensBound,
} from '../../formats/index.js';
import { type MicroUsd, maxCostOfRequest, type TokenPriceMicro } from '../../money/index.js';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../protocol/index.js';

/** Input estimate margin: the buyer counts input with its own rules; never reserve below them. */
function withMargin(tokens: number): number {
  return Math.ceil(tokens * 1.25) + 64;
}

/** How a request's input tokens are sized: counted, or bounded by its texts' UTF-8 bytes. */
export type InputSizing = 'counted' | 'bound';

/** What a request may use: input tokens (with the margin) and output tokens. */
export interface RequestSize {
  inputTokens: number;
  outputTokens: number;
  /** False when the request set no max tokens (DEFAULT_MAX_OUTPUT_TOKENS then). */
  maxTokensSet: boolean;
}

/**
 * The size of `body` on `path`, or null when it cannot be sized (not a text route, or a body the
 * formats cannot read): the caller then reserves its configured maximum.
 */
export function requestSize(
  path: string,
  body: Record<string, unknown>,
  sizing: InputSizing,
): RequestSize | null {
  const format = formatOfPath(path.split('?')[0] ?? path);
  if (!format) return null;
  try {
    // A body the formats cannot read is not sized (the buyer refuses it, at no cost).
    parseRequest(body, format);
  } catch {
    return null;
  }
  // Counted as the buyer counts the input it pays for (src/formats/requestTokens.ts): the
  // amount reserved at the route's price then always covers the request there.
  const input = sizing === 'bound' ? requestTokensBound(body) : countRequestTokens(body);
  const requested = maxOutputTokensOf(format, body);
  const maxTokensSet = requested !== undefined && Number.isSafeInteger(requested) && requested > 0;
  return {
    inputTokens: withMargin(input),
    outputTokens: maxTokensSet ? requested : DEFAULT_MAX_OUTPUT_TOKENS,
    maxTokensSet,
  };
}

/** What a request of `size` may cost at `price`. */
export function costOfSize(size: RequestSize, price: TokenPriceMicro): MicroUsd {
  return maxCostOfRequest(size.inputTokens, size.outputTokens, price);
}

function sizedCost(
  path: string,
  body: Record<string, unknown>,
  price: TokenPriceMicro,
  sizing: InputSizing,
): MicroUsd | null {
  // Free input costs nothing whatever its count (`maxCostOfRequest` prices every input token
  // at the input price): the bound, which reads the body as counting does, is enough.
  const size = requestSize(path, body, price.inputMicroPerMillion === 0n ? 'bound' : sizing);
  return size && costOfSize(size, price);
}

/** The reservation for `body` on `path` at `price`, or null when it cannot be sized. */
export function requestMaxCost(
  path: string,
  body: Record<string, unknown>,
  price: TokenPriceMicro,
): MicroUsd | null {
  return sizedCost(path, body, price, 'counted');
}

/**
 * An upper bound of `requestMaxCost` that counts no tokens: the input's tokens are bounded by its
 * texts' UTF-8 bytes (`requestTokensBound`), and the margin and prices grow with the count, so it
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
