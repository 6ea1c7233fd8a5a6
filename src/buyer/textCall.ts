/**
 * The seller call of a chat-completions / responses / messages request: the body in the seller's
 * protocol, the output capped to the gateway's max cost, and the payment bound.
 */
import { SvcError } from '../errors/index.js';
import { type MicroUsd, maxCostOfRequest, maxOutputTokensWithin } from '../money/index.js';
import { SVC_HEADER } from '../protocol/index.js';
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

/** Caps the output so the cost stays within the gateway's max cost. */
function capOutput(
  body: Record<string, unknown>,
  ctx: ProxyContext,
  maxOut: number,
): Record<string, unknown> {
  const field =
    ctx.route.protocol === 'openai-responses'
      ? 'max_output_tokens'
      : ctx.route.protocol === 'openai-chat-completions' && body.max_completion_tokens !== undefined
        ? 'max_completion_tokens'
        : 'max_tokens';
  const current = requestedMaxOutput(body);
  return { ...body, [field]: current === undefined ? maxOut : Math.min(current, maxOut) };
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
    if (ctx.maxCostMicro !== undefined) {
      const maxOut = maxOutputTokensWithin(ctx.maxCostMicro, await inputTokens(), offer.price);
      if (maxOut === 0) {
        const error = new SvcError('spend_limit_reached', {
          message: `${SVC_HEADER.maxCostUsd} does not cover the input of this request at seller ${offer.peerId}'s prices.`,
          details: { peerId: offer.peerId },
        });
        return failure('stop', error, error.code);
      }
      sellerBody = capOutput(sellerBody, ctx, maxOut);
      // The buyer pays at most what the (capped) max tokens cost at this seller's price.
      const bounded = maxCostOfRequest(
        await inputTokens(),
        requestedMaxOutput(sellerBody) ?? maxOut,
        offer.price,
      );
      maxCostMicro = ctx.maxCostMicro;
      if (bounded < maxCostMicro) maxCostMicro = bounded;
    } else {
      const maxOut =
        requestedMaxOutput(sellerBody) ?? offer.capabilities?.maxOutputTokens ?? DEFAULT_MAX_OUTPUT;
      maxCostMicro = maxCostOfRequest(await inputTokens(), maxOut, offer.price);
    }
  }
  const { translator } = ctx.service.deps;
  const translated = translator.request(ctx.route.protocol, candidate.sellerProtocol, sellerBody);
  // Nothing changed (same format, same model, no preset, cap or usage request added): the
  // client's bytes go as they came instead of re-encoded
  // (docs/decisions/145-request-path-pass-through.md).
  const unchanged = translated === relayed && body === ctx.body && body.model === offer.serviceId;
  return {
    path: PROTOCOL_PATHS[candidate.sellerProtocol] ?? ctx.req.url ?? '/',
    body:
      unchanged && ctx.rawBody !== undefined
        ? ctx.rawBody
        : new TextEncoder().encode(JSON.stringify(translated)),
    headers: headersForSeller(ctx.req),
    price: offer.price,
    ...(maxCostMicro !== undefined ? { maxCostMicro } : {}),
    inputTokens,
  };
}
