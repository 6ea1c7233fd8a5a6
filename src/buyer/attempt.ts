/**
 * One attempt at one seller, for every route (text and media): payment preparation, the request
 * with a head timeout, the classification of a failure (docs/decisions/052-failover.md), and for
 * answers that are not streams the whole body, read under `buyer.answerLimitBytes`. Whatever
 * fails releases the prepared payment; a failure before any byte reached the client may fail over.
 */
import { errorMessage, isSvcError, SvcError } from '../errors/index.js';
import { addressFromPeerId } from '../identity/index.js';
import type { MicroUsd, TokenPriceMicro } from '../money/index.js';
import { type SellerResponse, TransportError } from '../network/index.js';
import { actionForStatus, type RouteCandidate } from '../routing/index.js';
import { isAudit, type ProxyContext } from './context.js';
import { MAX_EVIDENCE_RESPONSE_BYTES } from './evidence.js';
import {
  type AttemptFailure,
  cancelled,
  failure,
  LOCK_EXHAUSTED,
  readErrorBody,
  sellerErrorOf,
  statusFailure,
  transportFailure,
} from './sellerFailure.js';

/** What to send to one seller. */
export interface SellerCall {
  path: string;
  body: Uint8Array;
  headers: Record<string, string>;
  price: TokenPriceMicro;
  /** Most the request may cost; undefined: sent unpaid (free offers, a video queue). */
  maxCostMicro?: MicroUsd;
  /** Input tokens counted by the buyer (lazy: the tokenizer runs only when needed, and yields). */
  inputTokens: () => Promise<number>;
  /** Read the answer whole even when it says it is a stream (media answers). */
  whole?: boolean;
}

export interface AttemptOk {
  kind: 'ok';
  response: SellerResponse;
  controller: AbortController;
  /** Stops following the client's abort (once the answer is delivered or abandoned). */
  detach: () => void;
  paid: boolean;
  price: TokenPriceMicro;
  /** The most the buyer pays this seller for the request (undefined: sent unpaid). */
  maxCostMicro?: MicroUsd;
  inputTokens: () => Promise<number>;
  /** The whole answer, for answers that are not event streams. */
  whole?: Buffer;
  /** What was sent, as the seller's receipt must cover it (src/buyer/receiptCheck.ts). */
  sent: SentRequest;
}

/** The request as sent to the seller, and when (unix ms, the clock sellers sign receipts with). */
export interface SentRequest {
  path: string;
  body: Uint8Array;
  /** Multipart bodies go byte for byte: their `model` is the client's, not the offer's. */
  multipart: boolean;
  atMs: number;
}

export type AttemptOutcome = AttemptOk | AttemptFailure;
export type { AttemptFailure };

/** Time a whole (non-stream) answer may take to arrive after its head. */
const WHOLE_ANSWER_MS = 600_000;

/** True when the answer is an event stream (delivered as it arrives, never read whole). */
export function isStream(response: SellerResponse): boolean {
  return (response.headers['content-type'] ?? '').includes('text/event-stream');
}

async function preparePayment(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  call: SellerCall,
): Promise<{ payment?: Record<string, unknown>; paid: boolean } | AttemptFailure> {
  const { offer } = candidate;
  if (offer.free || call.maxCostMicro === undefined) return { paid: false };
  try {
    const prepared = await ctx.service.deps.payments.prepare({
      identity: ctx.request.access.identity,
      peerId: offer.peerId,
      sellerAddress: addressFromPeerId(offer.peerId),
      price: call.price,
      maxCostMicro: call.maxCostMicro,
      requestId: ctx.request.id,
      ...(offer.sellerPayments ? { sellerPayments: offer.sellerPayments } : {}),
    });
    return prepared ? { payment: prepared as Record<string, unknown>, paid: true } : { paid: true };
  } catch (error) {
    const svcError = isSvcError(error) ? error : new SvcError('payment_failed', { cause: error });
    return failure('stop', svcError, svcError.code);
  }
}

/**
 * A controller that follows the client's abort; `detach` stops following. The follower is the
 * signal's listener itself (`handleEvent`): no closures per attempt.
 */
class ClientFollower {
  readonly controller = new AbortController();
  constructor(private readonly client: AbortSignal) {
    client.addEventListener('abort', this, { once: true });
  }
  handleEvent(): void {
    this.controller.abort(this.client.reason);
  }
  detach(): void {
    this.client.removeEventListener('abort', this);
  }
}

function followClient(ctx: ProxyContext): { controller: AbortController; detach: () => void } {
  const follower = new ClientFollower(ctx.clientAbort.signal);
  return { controller: follower.controller, detach: follower.detach.bind(follower) };
}

/** The head timeout: aborts the attempt (a module function: no closure per attempt). */
function headTimeUp(controller: AbortController, peerId: string): void {
  controller.abort(new TransportError('timeout', peerId, 'no response head', { beforeHead: true }));
}

function wholeTimeUp(controller: AbortController, peerId: string): void {
  controller.abort(new TransportError('timeout', peerId, 'answer too slow', { beforeHead: false }));
}

function ignore(): void {}

/**
 * Rejects with the signal's reason once it aborts, for a transport step that ignores the signal.
 * The race is the signal's listener itself (`handleEvent`): no closures per attempt.
 */
class AbortRace {
  readonly promise: Promise<never>;
  private readonly reject: (reason: unknown) => void;
  constructor(private readonly signal: AbortSignal) {
    const { promise, reject } = Promise.withResolvers<never>();
    this.promise = promise;
    this.reject = reject;
    promise.catch(ignore);
    signal.addEventListener('abort', this, { once: true });
  }
  handleEvent(): void {
    this.reject(this.signal.reason);
  }
}

/** True when the head timeout aborted the attempt (nothing else aborts it with a timeout then). */
function headTimedOut(controller: AbortController): boolean {
  const reason: unknown = controller.signal.reason;
  return reason instanceof TransportError && reason.failure === 'timeout';
}

/** How one attempt is sent: its payment, its controller, the answer bytes kept as evidence. */
interface Sending {
  payment: Record<string, unknown> | undefined;
  controller: AbortController;
  keepResponseBytes: number | undefined;
}

/** The response head, or the failure; the head timeout aborts `controller`. */
async function requestHead(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  call: SellerCall,
  { payment, controller, keepResponseBytes }: Sending,
): Promise<SellerResponse | AttemptFailure> {
  const { deps } = ctx.service;
  const peerId = candidate.offer.peerId;
  const headTimeoutMs = deps.config.sellerHeadTimeoutSeconds * 1000;
  const timer = setTimeout(headTimeUp, headTimeoutMs, controller, peerId);
  const aborted = new AbortRace(controller.signal).promise;
  try {
    return await Promise.race([
      deps.transport.request(peerId, {
        method: 'POST',
        path: call.path,
        headers: call.headers,
        body: call.body,
        ...(payment ? { payment } : {}),
        signal: controller.signal,
        headTimeoutMs,
        ...(keepResponseBytes !== undefined ? { keepResponseBytes } : {}),
      }),
      aborted,
    ]);
  } catch (error) {
    if (error instanceof TransportError)
      return transportFailure(error, ctx, headTimedOut(controller));
    if (ctx.clientAbort.signal.aborted) return cancelled();
    const cause = new TransportError('protocol', peerId, String(error), {
      beforeHead: true,
      cause: error,
    });
    return transportFailure(cause, ctx, headTimedOut(controller));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The whole answer, at most `buyer.answerLimitBytes`. Nothing reached the client yet, so a cut
 * body fails over like a failure before the head.
 */
async function readWhole(
  ctx: ProxyContext,
  peerId: string,
  response: SellerResponse,
  controller: AbortController,
): Promise<Buffer | AttemptFailure> {
  const limit = ctx.service.deps.config.answerLimitBytes;
  const timer = setTimeout(wholeTimeUp, WHOLE_ANSWER_MS, controller, peerId);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      size += chunk.length;
      if (size > limit) {
        controller.abort(new Error('answer over the limit'));
        return failure(
          'next',
          new SvcError('seller_answer_too_large', {
            message: `Seller ${peerId} sent an answer over ${limit} bytes (buyer.answerLimitBytes).`,
            details: { peerId, limitBytes: limit },
          }),
          'too_large_answer',
        );
      }
      chunks.push(chunk);
    }
    // One chunk (the usual whole answer) is used as it is: no copy.
    const only = chunks.length === 1 ? chunks[0]! : undefined;
    return only
      ? Buffer.from(only.buffer, only.byteOffset, only.byteLength)
      : Buffer.concat(chunks);
  } catch (error) {
    if (ctx.clientAbort.signal.aborted) return cancelled();
    const why = errorMessage(error);
    return failure(
      'next',
      new SvcError('seller_error', {
        message: `Seller ${peerId} cut its answer after ${size} bytes: ${why}.`,
        details: { peerId, failure: error instanceof TransportError ? error.failure : 'cut' },
      }),
      'cut',
    );
  } finally {
    clearTimeout(timer);
  }
}

/** Sends `call` to one candidate. */
export async function sendToSeller(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  call: SellerCall,
): Promise<AttemptOutcome> {
  const { payments } = ctx.service.deps;
  const peerId = candidate.offer.peerId;
  const prepared = await preparePayment(ctx, candidate, call);
  if ('kind' in prepared) return prepared;
  const { payment, paid } = prepared;
  const releasePayment = (sellerError?: ReturnType<typeof sellerErrorOf>) => {
    if (paid) payments.release?.(ctx.request.id, sellerError);
  };
  const { controller, detach } = followClient(ctx);
  const sent: SentRequest = {
    path: call.path,
    body: call.body,
    multipart: (call.headers['content-type'] ?? '').startsWith('multipart/'),
    atMs: Date.now(),
  };
  // An audit's answer is kept with its receipt, as evidence (src/buyer/evidence.ts).
  const keep = isAudit(ctx) ? MAX_EVIDENCE_RESPONSE_BYTES : undefined;
  const sending = { payment, controller, keepResponseBytes: keep };
  const response = await requestHead(ctx, candidate, call, sending);
  if ('kind' in response) {
    detach();
    releasePayment();
    return response;
  }
  if (response.status >= 400) {
    const text = await readErrorBody(response);
    detach();
    const sellerError = sellerErrorOf(text);
    releasePayment(sellerError);
    const status = response.status;
    if (paid && status === 402 && sellerError.code === 'channel_lock_exhausted') {
      // The seller counts more committed on the channel than the buyer does: the release above
      // noted its count, so the same seller is asked again at once with a lock grown to cover it.
      return { ...statusFailure(peerId, status, text, 'same', '0'), label: LOCK_EXHAUSTED };
    }
    return statusFailure(
      peerId,
      status,
      text,
      actionForStatus(status),
      response.headers['retry-after'],
    );
  }
  const ok: AttemptOk = {
    kind: 'ok',
    response,
    controller,
    detach,
    paid,
    price: call.price,
    ...(paid && call.maxCostMicro !== undefined ? { maxCostMicro: call.maxCostMicro } : {}),
    inputTokens: call.inputTokens,
    sent,
  };
  if (!call.whole && isStream(response)) return ok;
  const whole = await readWhole(ctx, peerId, response, controller);
  if (Buffer.isBuffer(whole)) return { ...ok, whole };
  detach();
  releasePayment();
  return whole;
}
