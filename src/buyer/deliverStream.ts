/**
 * Delivers a streamed answer: the seller's events (translated when the formats differ) written
 * with backpressure, then the closing usage comment (src/protocol/usageComment.ts). A seller that
 * fails after the first byte (reset, timeout, malformed event, no final event) ends the stream
 * with the client format's error event and the request is recorded as failed, at the cost of
 * what was delivered (docs/decisions/110-truthful-stream-failures.md).
 */
import { once } from 'node:events';
import type { SvcError } from '../errors/index.js';
import { encodeUsageComment } from '../protocol/index.js';
import type { RouteCandidate } from '../routing/index.js';
import {
  completePayment,
  priceAnswer,
  rememberSeller,
  sellerHeaders,
  servedBy,
  settleUsage,
  trailerOf,
} from './answerParts.js';
import type { AttemptOk } from './attempt.js';
import { finishRequest, type ProxyContext } from './context.js';
import { isDoneChunk, streamErrorBytes, streamFailureOf } from './streamFailure.js';
import { StreamUsageScanner } from './usage.js';

/** The seller's events as they pass: scanned for usage and outcome, a thrown failure kept. */
class SellerTap implements AsyncIterable<Uint8Array> {
  readonly scanner: StreamUsageScanner;
  thrown: unknown;
  /** The seller's body ended (cleanly or not). */
  done = false;
  private readonly events: AsyncIterator<Uint8Array>;

  private readonly peerId: string;

  constructor(ok: AttemptOk, candidate: RouteCandidate) {
    this.peerId = candidate.offer.peerId;
    this.scanner = new StreamUsageScanner(candidate.sellerProtocol);
    this.events = ok.response.body[Symbol.asyncIterator]();
  }

  async next(): Promise<IteratorResult<Uint8Array>> {
    try {
      const step = await this.events.next();
      if (step.done) this.done = true;
      else this.scanner.push(step.value);
      return step;
    } catch (error) {
      this.done = true;
      this.thrown ??= error;
      // The translator renders what it is given: the seller's failure, not an internal error.
      throw streamFailureOf(this.peerId, error, 'open') ?? error;
    }
  }

  /** Reads what the translator left (a usage chunk, `[DONE]`) so the seller's body is never cut. */
  async drain(): Promise<void> {
    try {
      for (let step = await this.next(); !step.done; step = await this.next()) {
        // scanned in next()
      }
    } catch {
      // kept in `thrown`
    }
  }

  /** The failure of the seller's stream so far (a body that ended without a final event too). */
  failure(): SvcError | undefined {
    const { verdict } = this.scanner;
    if (verdict === 'open' && !this.done) return undefined;
    return streamFailureOf(this.peerId, this.thrown, verdict);
  }

  async close(): Promise<void> {
    await this.events.return?.().catch(() => undefined);
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return { next: () => this.next() };
  }
}

/** Writes the client's stream; the failure of the seller's stream, if any. */
async function pump(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  tap: SellerTap,
): Promise<SvcError | undefined> {
  const { res } = ctx;
  const translated = candidate.sellerProtocol !== ctx.route.protocol;
  try {
    const { translator } = ctx.service.deps;
    const chunks = translator.stream(ctx.route.protocol, candidate.sellerProtocol, tap);
    for await (const chunk of chunks) {
      if (ctx.clientAbort.signal.aborted) return undefined;
      // A translated chat error is followed by `[DONE]`, which must not reach the client.
      if (translated && isDoneChunk(chunk) && tap.failure()) continue;
      if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
    }
  } catch (error) {
    tap.thrown ??= error;
  }
  if (ctx.clientAbort.signal.aborted) return undefined;
  await tap.drain();
  const failure = tap.failure();
  if (!failure || res.destroyed) return failure;
  // The seller's own error event already reached the client when passed through untouched.
  const alreadySent = !translated && tap.scanner.verdict === 'seller_error' && !tap.thrown;
  const translatorSent = translated && ctx.route.protocol !== 'openai-responses';
  if (!alreadySent && !translatorSent) {
    res.write(streamErrorBytes(ctx.route.protocol, failure, tap.scanner.events));
  }
  return failure;
}

/** Delivers a streamed answer. */
export async function deliverStream(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  ok: AttemptOk,
  affinityKey: string | undefined,
): Promise<void> {
  const { res, service } = ctx;
  const trailer = trailerOf(ok);
  res.writeHead(ok.response.status, {
    'content-type': ok.response.headers['content-type'] ?? 'text/event-stream',
    'cache-control': 'no-cache',
    ...sellerHeaders(ctx, candidate),
  });
  res.flushHeaders();
  const tap = new SellerTap(ok, candidate);
  const failure = await pump(ctx, candidate, tap).finally(() => ok.detach());
  const cancelled = ctx.clientAbort.signal.aborted;
  if (cancelled) {
    ok.controller.abort(new Error('client cancelled'));
    await tap.close();
  }
  const { scanner } = tap;
  const { usage, estimate } = await settleUsage(
    scanner.usage,
    (await trailer)?.usage,
    ok.inputTokens,
    () => scanner.streamedText,
  );
  const { cost, costUsd } = priceAnswer(ok, usage);
  const errorCode = cancelled ? 'request_cancelled' : failure?.code;
  if (!res.destroyed) {
    res.end(encodeUsageComment({ ...usage, costUsd, ...(errorCode ? { errorCode } : {}) }));
  }
  service.metrics.spend.inc(Number(cost));
  finishRequest(ctx, {
    ...servedBy(candidate, true),
    status: cancelled ? 499 : failure ? failure.status : ok.response.status,
    completed: !cancelled && !failure,
    usage,
    costUsd,
    ...(errorCode ? { errorCode } : {}),
  });
  if (failure) {
    service.health.recordFailure(candidate.offer.peerId);
    service.metrics.sellerFailures.inc({ peer_id: candidate.offer.peerId, reason: failure.code });
  } else {
    const responseId =
      candidate.sellerProtocol === 'openai-responses' && ctx.route.protocol === 'openai-responses'
        ? scanner.responseId
        : undefined;
    rememberSeller(ctx, candidate, affinityKey, responseId);
  }
  // The delivered part is paid for, failed or not.
  await completePayment(ctx, candidate, ok, trailer, estimate);
}
