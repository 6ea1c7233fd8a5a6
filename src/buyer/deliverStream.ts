/**
 * Delivers a streamed answer: the seller's events (translated when the formats differ) written
 * with backpressure, then the closing usage comment (src/protocol/usageComment.ts). A seller that
 * fails after the first byte (reset, timeout, malformed event, no final event) ends the stream
 * with the client format's error event and the request is recorded as failed, at the cost of
 * what was delivered (docs/decisions/110-truthful-stream-failures.md). A seller that goes past the
 * request's cost cap is cut the same way, with `max_cost_reached` (src/buyer/costCap.ts). The
 * request is journaled as open before the first event, and paid before its cost is written
 * (src/buyer/commitCost.ts).
 */
import { once } from 'node:events';
import { SvcError } from '../errors/index.js';
import { formatUsd } from '../money/index.js';
import { encodeUsageComment } from '../protocol/index.js';
import type { RouteCandidate } from '../routing/index.js';
import { rememberSeller, sellerHeaders, servedBy, settleUsage, trailerOf } from './answerParts.js';
import type { AttemptOk } from './attempt.js';
import { commitCost, journal } from './commitCost.js';
import { finishRequest, type ProxyContext, ZERO_USAGE } from './context.js';
import { CostCap } from './costCap.js';
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
  cap: CostCap,
): Promise<SvcError | undefined> {
  const { res } = ctx;
  const translated = candidate.sellerProtocol !== ctx.route.protocol;
  const failed = () => (cap.reached ? capError(cap) : tap.failure());
  try {
    const { translator } = ctx.service.deps;
    const chunks = translator.stream(ctx.route.protocol, candidate.sellerProtocol, cap.watch(tap));
    for await (const chunk of chunks) {
      if (ctx.clientAbort.signal.aborted) return undefined;
      // A translated chat error is followed by `[DONE]`, which must not reach the client.
      if (translated && isDoneChunk(chunk) && failed()) continue;
      if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
    }
  } catch (error) {
    if (!cap.reached) tap.thrown ??= error;
  }
  if (ctx.clientAbort.signal.aborted) return undefined;
  // A seller cut at the cap is not read further: it may never stop.
  if (!cap.reached) await tap.drain();
  const failure = failed();
  if (!failure || res.destroyed) return failure;
  // The seller's own error event already reached the client when passed through untouched.
  const alreadySent =
    !translated && !cap.reached && tap.scanner.verdict === 'seller_error' && !tap.thrown;
  const translatorSent = translated && ctx.route.protocol !== 'openai-responses';
  if (!alreadySent && !translatorSent) {
    res.write(streamErrorBytes(ctx.route.protocol, failure, tap.scanner.events));
  }
  return failure;
}

function capError(cap: CostCap): SvcError {
  return new SvcError('max_cost_reached', { details: { maxCostUsd: cap.maxCostUsd } });
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
  const served = servedBy(candidate, true);
  // Journaled as open: a buyer restarted mid-stream still knows the request (and that it
  // committed nothing for it, since the final record is written before the voucher is signed).
  journal(ctx, { ...served, status: ok.response.status, completed: false, usage: ZERO_USAGE }, 0n);
  const cap = new CostCap({
    maxCostMicro: ok.maxCostMicro,
    price: ok.price,
    inputTokens: ok.inputTokens,
    sellerProtocol: candidate.sellerProtocol,
  });
  const tap = new SellerTap(ok, candidate);
  const failure = await pump(ctx, candidate, tap, cap).finally(() => ok.detach());
  const cancelled = ctx.clientAbort.signal.aborted;
  if (cancelled || cap.reached) {
    ok.controller.abort(new Error(cancelled ? 'client cancelled' : 'cost cap reached'));
    await tap.close();
  }
  const { scanner } = tap;
  // A seller cut at the cap is not asked for its claim: the buyer pays its own count, capped.
  const claimed = cap.reached ? undefined : await trailer;
  const { usage, estimate } = settleUsage(
    scanner.usage,
    claimed?.usage,
    ok.inputTokens,
    () => scanner.streamedText,
  );
  const errorCode = cancelled ? 'request_cancelled' : failure?.code;
  const draft = {
    ...served,
    status: cancelled ? 499 : failure ? failure.status : ok.response.status,
    completed: !cancelled && !failure,
    usage,
    ...(errorCode ? { errorCode } : {}),
  };
  // The delivered part is paid for, failed or not; the cost written is what was committed.
  const cost = await commitCost(ctx, candidate, ok, claimed, estimate, usage, draft);
  const costUsd = formatUsd(cost);
  if (!res.destroyed) {
    res.end(encodeUsageComment({ ...usage, costUsd, ...(errorCode ? { errorCode } : {}) }));
  }
  service.metrics.spend.inc(Number(cost));
  finishRequest(ctx, { ...draft, costUsd });
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
}
