/**
 * One attempt at one seller: payment preparation, the max-cost cap, the request with a head
 * timeout, and the classification of a failure (spec "Routing" failover rules).
 */
import { isSvcError, SvcError } from '../errors/index.js';
import { addressFromPeerId } from '../identity/index.js';
import { type MicroUsd, maxCostOfRequest, maxOutputTokensWithin } from '../money/index.js';
import { type SellerResponse, TransportError } from '../network/index.js';
import {
  actionForStatus,
  actionForTransportError,
  type FailoverAction,
  type RouteCandidate,
} from '../routing/index.js';
import type { ProxyContext } from './context.js';
import { headersForSeller } from './http.js';
import { countRequestTokens } from './tokenCount.js';
import { PROTOCOL_PATHS } from './translator.js';

export type AttemptOutcome =
  | {
      kind: 'ok';
      response: SellerResponse;
      controller: AbortController;
      release: () => void;
      paid: boolean;
      /** The most the buyer pays this seller for the request (undefined: a free offer). */
      maxCostMicro?: MicroUsd;
      /** Input tokens counted locally (lazy: the tokenizer runs only when needed). */
      inputTokens: () => number;
    }
  | {
      kind: 'failed';
      action: FailoverAction | 'cancelled';
      error: SvcError;
      label: string;
      retryAfter?: string;
    };

const MAX_ERROR_BODY = 64 * 1024;
/** Output budget assumed for the payment bound when the request sets none. */
const DEFAULT_MAX_OUTPUT = 32_768;

async function readErrorBody(response: SellerResponse): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      if (size < MAX_ERROR_BODY) chunks.push(chunk);
      size += chunk.length;
    }
  } catch {
    // A body cut short still tells us the status.
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BODY);
}

function sellerMessage(text: string): string {
  try {
    const json = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof json.error === 'string') return json.error;
    if (typeof json.error?.message === 'string') return json.error.message;
    if (typeof json.message === 'string') return json.message;
  } catch {
    // not JSON
  }
  return text.slice(0, 500) || '(empty body)';
}

/** The seller's SvcError code and details, when its error body is one. */
function sellerErrorOf(text: string): { code?: string; details?: Record<string, unknown> } {
  try {
    // Error bodies carry the code and details inside `error` (both API styles).
    const json = JSON.parse(text) as { error?: Record<string, unknown> };
    const error = typeof json.error === 'object' && json.error !== null ? json.error : {};
    const code = typeof error.code === 'string' ? error.code : undefined;
    return { ...(code ? { code } : {}), details: error };
  } catch {
    return {};
  }
}

const MAX_TOKEN_FIELDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const;

function requestedMaxOutput(body: Record<string, unknown>): number | undefined {
  for (const field of MAX_TOKEN_FIELDS) {
    const value = body[field];
    if (typeof value === 'number' && value > 0) return value;
  }
  return undefined;
}

/** Caps the output so the cost stays within `budget` (x-svc-max-cost-usd). */
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

function failure(
  action: FailoverAction | 'cancelled',
  error: SvcError,
  label: string,
  retryAfter?: string,
): AttemptOutcome {
  return retryAfter === undefined
    ? { kind: 'failed', action, error, label }
    : { kind: 'failed', action, error, label, retryAfter };
}

function transportFailure(
  error: TransportError,
  ctx: ProxyContext,
  timedOut: boolean,
): AttemptOutcome {
  const peerId = error.peerId;
  if (ctx.clientAbort.signal.aborted) {
    return failure('cancelled', new SvcError('request_cancelled'), 'cancelled');
  }
  if (timedOut || error.failure === 'timeout') {
    return failure(
      'next',
      new SvcError('seller_timeout', {
        message: `Seller ${peerId} sent no response within ${ctx.service.deps.config.sellerHeadTimeoutSeconds} s.`,
        details: { peerId },
      }),
      'timeout',
    );
  }
  const action = actionForTransportError(error);
  if (error.failure === 'unreachable') {
    return failure(
      action,
      new SvcError('peer_unreachable', {
        message: `Seller ${peerId} cannot be reached. Run \`svc network browse\` to see reachable sellers.`,
        details: { peerId },
      }),
      'unreachable',
    );
  }
  if (error.failure === 'too_large') {
    return failure(
      'stop',
      new SvcError('upload_body_too_large', { details: { peerId } }),
      'too_large',
    );
  }
  return failure(
    action,
    new SvcError('seller_error', {
      message: `Seller ${peerId} failed: ${error.message}.`,
      details: { peerId, failure: error.failure },
    }),
    error.failure,
  );
}

/** Sends the request to one candidate. */
export async function attemptSeller(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  body: Record<string, unknown>,
): Promise<AttemptOutcome> {
  const { deps } = ctx.service;
  const { offer } = candidate;
  let sellerBody: Record<string, unknown> = { ...body, model: offer.serviceId };
  let counted: number | undefined;
  const inputTokens = () => {
    counted ??= countRequestTokens(body);
    return counted;
  };
  let payment: Record<string, unknown> | undefined;
  let paid = false;
  let agreedMaxCostMicro: MicroUsd | undefined;
  try {
    if (!offer.free) {
      let maxCostMicro: MicroUsd;
      if (ctx.maxCostMicro !== undefined) {
        const maxOut = maxOutputTokensWithin(ctx.maxCostMicro, inputTokens(), offer.price);
        if (maxOut === 0) {
          throw new SvcError('spend_limit_reached', {
            message: `x-svc-max-cost-usd does not cover the input of this request at seller ${offer.peerId}'s prices.`,
            details: { peerId: offer.peerId },
          });
        }
        sellerBody = capOutput(sellerBody, ctx, maxOut);
        // The buyer pays at most what the (capped) max tokens cost at this seller's price.
        const bounded = maxCostOfRequest(
          inputTokens(),
          requestedMaxOutput(sellerBody) ?? maxOut,
          offer.price,
        );
        maxCostMicro = ctx.maxCostMicro;
        if (bounded < maxCostMicro) maxCostMicro = bounded;
      } else {
        const maxOut =
          requestedMaxOutput(sellerBody) ??
          offer.capabilities?.maxOutputTokens ??
          DEFAULT_MAX_OUTPUT;
        maxCostMicro = maxCostOfRequest(inputTokens(), maxOut, offer.price);
      }
      const prepared = await deps.payments.prepare({
        identity: ctx.access.identity,
        peerId: offer.peerId,
        sellerAddress: addressFromPeerId(offer.peerId),
        price: offer.price,
        maxCostMicro,
        requestId: ctx.requestId,
        ...(offer.sellerPayments ? { sellerPayments: offer.sellerPayments } : {}),
      });
      paid = true;
      agreedMaxCostMicro = maxCostMicro;
      if (prepared) payment = prepared as Record<string, unknown>;
    }
  } catch (error) {
    const svcError = isSvcError(error) ? error : new SvcError('payment_failed', { cause: error });
    return failure('stop', svcError, svcError.code);
  }
  const translated = deps.translator.request(
    ctx.route.protocol,
    candidate.sellerProtocol,
    sellerBody,
  );
  const path = PROTOCOL_PATHS[candidate.sellerProtocol] ?? ctx.req.url ?? '/';

  const controller = new AbortController();
  const onClientAbort = () => controller.abort(ctx.clientAbort.signal.reason);
  ctx.clientAbort.signal.addEventListener('abort', onClientAbort, { once: true });
  const release = () => ctx.clientAbort.signal.removeEventListener('abort', onClientAbort);
  const headTimeoutMs = deps.config.sellerHeadTimeoutSeconds * 1000;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(
      new TransportError('timeout', offer.peerId, 'no response head', { beforeHead: true }),
    );
  }, headTimeoutMs);
  const aborted = new Promise<never>((_, reject) => {
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), {
      once: true,
    });
  });
  aborted.catch(() => {});
  let response: SellerResponse;
  try {
    response = await Promise.race([
      deps.transport.request(offer.peerId, {
        method: 'POST',
        path,
        headers: headersForSeller(ctx.req),
        body: new TextEncoder().encode(JSON.stringify(translated)),
        ...(payment ? { payment } : {}),
        signal: controller.signal,
        headTimeoutMs,
      }),
      aborted,
    ]);
  } catch (error) {
    release();
    if (payment) deps.payments.release?.(ctx.requestId);
    if (error instanceof TransportError) return transportFailure(error, ctx, timedOut);
    if (ctx.clientAbort.signal.aborted) {
      return failure('cancelled', new SvcError('request_cancelled'), 'cancelled');
    }
    return transportFailure(
      new TransportError('protocol', offer.peerId, String(error), {
        beforeHead: true,
        cause: error,
      }),
      ctx,
      timedOut,
    );
  } finally {
    clearTimeout(timer);
  }
  if (response.status < 400) {
    return {
      kind: 'ok',
      response,
      controller,
      release,
      paid,
      ...(agreedMaxCostMicro !== undefined ? { maxCostMicro: agreedMaxCostMicro } : {}),
      inputTokens,
    };
  }
  const text = await readErrorBody(response);
  release();
  if (payment) deps.payments.release?.(ctx.requestId, sellerErrorOf(text));
  const status = response.status;
  const message = `Seller ${offer.peerId} answered ${status}: ${sellerMessage(text)}`;
  const retryAfter = response.headers['retry-after'];
  const error = new SvcError(status === 429 ? 'rate_limited' : 'upstream_error', {
    status,
    message,
    details: { peerId: offer.peerId, sellerStatus: status },
    ...(retryAfter ? { headers: { 'retry-after': retryAfter } } : {}),
  });
  return failure(actionForStatus(status), error, String(status), retryAfter);
}
