/**
 * Sends a media request (image, video job, decision) to the ranked candidates: payment
 * preparation at the given unit or token price, the request with a head timeout, failover
 * on retryable failures before any byte reached the client (never for pins), then the whole
 * answer read into memory with the seller's trailer.
 */
import { errorMessage, isSvcError, SvcError } from '../../errors/index.js';
import { addressFromPeerId } from '../../identity/index.js';
import type { MicroUsd, TokenPriceMicro } from '../../money/index.js';
import { type SellerTrailer, TransportError } from '../../network/index.js';
import { actionForStatus, type RouteCandidate, type RoutePlan } from '../../routing/index.js';
import type { ProxyContext } from '../context.js';

export interface MediaCall {
  path: string;
  body: Uint8Array;
  headers: Record<string, string>;
  price: TokenPriceMicro;
  /** Most the request may cost; undefined: sent unpaid (a video queue). */
  maxCostMicro?: MicroUsd;
}

export interface MediaAnswer {
  candidate: RouteCandidate;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  trailer: SellerTrailer | undefined;
  paid: boolean;
  price: TokenPriceMicro;
}

const TRAILER_WAIT_MS = 2_000;

/** The seller's SvcError code and details, for `BuyerPayments.release`. */
function sellerErrorOf(text: string): { code?: string; details?: Record<string, unknown> } {
  try {
    const json = JSON.parse(text) as { error?: Record<string, unknown> };
    const error = typeof json.error === 'object' && json.error !== null ? json.error : {};
    const code = typeof error.code === 'string' ? error.code : undefined;
    return { ...(code ? { code } : {}), details: error };
  } catch {
    return {};
  }
}

function sellerMessage(text: string): string {
  try {
    const json = JSON.parse(text) as { error?: { message?: unknown } | string };
    if (typeof json.error === 'string') return json.error;
    if (typeof json.error?.message === 'string') return json.error.message;
  } catch {
    // not JSON
  }
  return text.slice(0, 500) || '(empty body)';
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Tries the plan's candidates in order; throws the last failure. */
export async function sendMedia(
  ctx: ProxyContext,
  plan: RoutePlan,
  build: (candidate: RouteCandidate) => MediaCall,
): Promise<MediaAnswer> {
  const { deps } = ctx.service;
  const { payments } = deps;
  let last: SvcError | undefined;
  for (const candidate of plan.candidates) {
    const { offer } = candidate;
    const call = build(candidate);
    let payment: Record<string, unknown> | undefined;
    let paid = false;
    if (!offer.free && call.maxCostMicro !== undefined) {
      if (ctx.maxCostMicro !== undefined && call.maxCostMicro > ctx.maxCostMicro) {
        throw new SvcError('spend_limit_reached', {
          message: `This request may cost up to ${call.maxCostMicro} micro-USD at seller ${offer.peerId}, above x-svc-max-cost-usd.`,
          details: { peerId: offer.peerId },
        });
      }
      try {
        const prepared = await deps.payments.prepare({
          identity: ctx.access.identity,
          peerId: offer.peerId,
          sellerAddress: addressFromPeerId(offer.peerId),
          price: call.price,
          maxCostMicro: call.maxCostMicro,
          requestId: ctx.requestId,
          ...(offer.sellerPayments ? { sellerPayments: offer.sellerPayments } : {}),
        });
        paid = true;
        if (prepared) payment = prepared as Record<string, unknown>;
      } catch (error) {
        throw isSvcError(error) ? error : new SvcError('payment_failed', { cause: error });
      }
    }
    const label = `${offer.peerId}@${offer.serviceId}`;
    const signal = AbortSignal.any([
      ctx.clientAbort.signal,
      AbortSignal.timeout(deps.config.sellerHeadTimeoutSeconds * 1000 + 600_000),
    ]);
    let response: Awaited<ReturnType<typeof deps.transport.request>>;
    try {
      response = await deps.transport.request(offer.peerId, {
        method: 'POST',
        path: call.path,
        headers: call.headers,
        body: call.body,
        ...(payment ? { payment } : {}),
        signal,
        headTimeoutMs: deps.config.sellerHeadTimeoutSeconds * 1000,
      });
    } catch (error) {
      if (payment) payments.release?.(ctx.requestId);
      if (ctx.clientAbort.signal.aborted) throw new SvcError('request_cancelled');
      if (error instanceof TransportError && error.failure === 'too_large') {
        throw new SvcError('upload_body_too_large', { details: { peerId: offer.peerId } });
      }
      ctx.attempts.push(`${label}:${error instanceof TransportError ? error.failure : 'error'}`);
      ctx.service.health.recordFailure(offer.peerId);
      last = new SvcError('seller_error', {
        message: `Seller ${offer.peerId} failed: ${errorMessage(error)}.`,
        details: { peerId: offer.peerId },
      });
      if (plan.pinned) break;
      continue;
    }
    const body = await readAll(response.body);
    const trailer = await Promise.race([
      response.trailer.catch(() => undefined),
      new Promise<undefined>((resolve) => {
        setTimeout(() => resolve(undefined), TRAILER_WAIT_MS).unref();
      }),
    ]);
    if (response.status < 400) {
      ctx.service.health.recordSuccess(offer.peerId);
      return {
        candidate,
        status: response.status,
        headers: response.headers,
        body,
        trailer,
        paid,
        price: call.price,
      };
    }
    const status = response.status;
    if (payment) payments.release?.(ctx.requestId, sellerErrorOf(body.toString('utf8')));
    ctx.attempts.push(`${label}:${status}`);
    last = new SvcError(status === 429 ? 'rate_limited' : 'upstream_error', {
      status,
      message: `Seller ${offer.peerId} answered ${status}: ${sellerMessage(body.toString('utf8'))}`,
      details: { peerId: offer.peerId, sellerStatus: status },
    });
    const action = actionForStatus(status);
    if (action === 'next' || action === 'same') ctx.service.health.recordFailure(offer.peerId);
    if (plan.pinned || action === 'stop') break;
  }
  throw last ?? new SvcError('seller_error');
}
