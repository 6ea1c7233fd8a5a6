/**
 * The seller call of a chat-completions / responses / messages request: the body in the seller's
 * protocol, the offer checked against the gateway's cost cap, and the payment bound.
 */
import { SvcError } from '../errors/index.js';
import {
  formatUsd,
  type MicroUsd,
  maxCostOfRequest,
  maxOutputTokensWithin,
} from '../money/index.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, MAX_TOKENS_THAT_FIT, SVC_HEADER } from '../protocol/index.js';
import type { RouteCandidate } from '../routing/index.js';
import type { SellerCall } from './attempt.js';
import type { ProxyContext } from './context.js';
import { headersForSeller } from './http.js';
import { type AttemptFailure, failure } from './sellerFailure.js';
import { countRequestTokensAsync } from './tokenCount.js';
import { PROTOCOL_PATHS } from './translator.js';

/** Output budget assumed for the payment bound when the request sets none. */
const DEFAULT_MAX_OUTPUT = 32_768;

const MAX_TOKEN_FIELDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const;

function requestedMaxOutput(body: Record<string, unknown>): number | undefined {
  for (const field of MAX_TOKEN_FIELDS) {
    const value = body[field];
    if (typeof value === 'number' && value > 0) return value;
  }
  return undefined;
}

/** The body with its max output tokens set (the field of the client's format). */
function withMaxOutput(
  body: Record<string, unknown>,
  ctx: ProxyContext,
  maxOut: number,
): Record<string, unknown> {
  const field =
    ctx.request.route.protocol === 'openai-responses'
      ? 'max_output_tokens'
      : ctx.request.route.protocol === 'openai-chat-completions' &&
          body.max_completion_tokens !== undefined
        ? 'max_completion_tokens'
        : 'max_tokens';
  return { ...body, [field]: maxOut };
}

/**
 * Under the gateway's cost cap (docs/decisions/170-max-tokens-under-a-cost-cap.md) a request
 * asks the seller for its own max tokens, or DEFAULT_MAX_OUTPUT_TOKENS when it set none (at
 * most what the offer can produce), and never fewer: an offer whose price does not fit that
 * in the cap is skipped, saying how many tokens would fit there.
 */
function fitUnderCap(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  body: Record<string, unknown>,
  maxCostMicro: MicroUsd,
  inputTokens: number,
): { body: Record<string, unknown>; maxCostMicro: MicroUsd } | AttemptFailure {
  const { offer } = candidate;
  const requested = requestedMaxOutput(body);
  const wanted =
    requested ??
    Math.min(DEFAULT_MAX_OUTPUT_TOKENS, offer.capabilities?.maxOutputTokens ?? Number.MAX_VALUE);
  const fits = maxOutputTokensWithin(maxCostMicro, inputTokens, offer.price);
  if (fits < wanted) {
    const asked =
      requested === undefined
        ? `up to ${wanted} output tokens (the default when max tokens are not set)`
        : `up to ${requested} output tokens`;
    const error = new SvcError('spend_limit_reached', {
      message:
        fits > 0
          ? `This request asks for ${asked}, but its budget (${SVC_HEADER.maxCostUsd} ${formatUsd(maxCostMicro)}) can only afford ${fits} at seller ${offer.peerId}'s prices. Set max_tokens to ${fits} or less.`
          : `This request's budget (${SVC_HEADER.maxCostUsd} ${formatUsd(maxCostMicro)}) does not cover its input at seller ${offer.peerId}'s prices.`,
      details: { peerId: offer.peerId, [MAX_TOKENS_THAT_FIT]: fits },
    });
    return failure('skip', error, error.code);
  }
  return {
    body: requested === undefined ? withMaxOutput(body, ctx, wanted) : body,
    maxCostMicro: maxCostOfRequest(inputTokens, wanted, offer.price),
  };
}

/**
 * The call to `candidate`, or a failure when the max cost cannot cover its input. The input is a
 * stranger's text: counted on the tokenizer's yielding path (decision 100).
 */
export async function textCall(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  body: Record<string, unknown>,
): Promise<SellerCall | AttemptFailure> {
  const { offer } = candidate;
  const relayed: Record<string, unknown> = { ...body, model: offer.serviceId };
  let sellerBody = relayed;
  let counted: Promise<number> | undefined;
  const inputTokens = () => {
    counted ??= countRequestTokensAsync(body);
    return counted;
  };
  let maxCostMicro: MicroUsd | undefined;
  if (!offer.free) {
    if (ctx.request.limits.maxCostMicro !== undefined) {
      const fitted = fitUnderCap(
        ctx,
        candidate,
        sellerBody,
        ctx.request.limits.maxCostMicro,
        await inputTokens(),
      );
      if ('kind' in fitted) return fitted;
      // The buyer pays at most what the max tokens cost at this seller's price.
      sellerBody = fitted.body;
      maxCostMicro = fitted.maxCostMicro;
    } else {
      const maxOut =
        requestedMaxOutput(sellerBody) ?? offer.capabilities?.maxOutputTokens ?? DEFAULT_MAX_OUTPUT;
      maxCostMicro = maxCostOfRequest(await inputTokens(), maxOut, offer.price);
    }
  }
  const { translator } = ctx.service.deps;
  const translated = translator.request(
    ctx.request.route.protocol,
    candidate.sellerProtocol,
    sellerBody,
  );
  // Nothing changed (same format, same model, no preset, cap or usage request added): the
  // client's bytes go as they came instead of re-encoded
  // (docs/decisions/145-request-path-pass-through.md).
  const unchanged =
    translated === relayed && body === ctx.request.body && body.model === offer.serviceId;
  return {
    path: PROTOCOL_PATHS[candidate.sellerProtocol] ?? ctx.request.head.url ?? '/',
    body:
      unchanged && ctx.request.rawBody !== undefined
        ? ctx.request.rawBody
        : new TextEncoder().encode(JSON.stringify(translated)),
    headers: headersForSeller(ctx.request.head),
    price: offer.price,
    ...(maxCostMicro !== undefined ? { maxCostMicro } : {}),
    inputTokens,
  };
}
