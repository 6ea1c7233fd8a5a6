/**
 * Delivers a streamed answer: the client's head held with the seller's preamble until the first
 * content (src/buyer/firstContent.ts; a seller that fails before it is a failed attempt, and the
 * next seller may answer), then the seller's events (translated when the formats differ) written
 * with backpressure, then the closing usage comment (src/protocol/usageComment.ts). A seller that
 * fails after the first content (reset, timeout, malformed event, no final event) ends the stream
 * with the client format's error event and the request is recorded as failed, at the cost of
 * what was delivered (docs/decisions/110-truthful-stream-failures.md). A seller that goes past the
 * request's cost cap is cut the same way, with `max_cost_reached` (src/buyer/costCap.ts). The
 * request is journaled as open before the first event (soon, when unpaid), and paid before its
 * cost is written (src/buyer/commitCost.ts).
 */
import { once } from 'node:events';
import { SvcError } from '../errors/index.js';
import { formatOfProtocol, isFailedAnswer } from '../formats/index.js';
import { formatUsd } from '../money/index.js';
import { encodeUsageComment } from '../protocol/index.js';
import type { RouteCandidate } from '../routing/index.js';
import { rememberSeller, sellerHeaders, servedBy, settleUsage, trailerOf } from './answerParts.js';
import { commitCost, journalOpen } from './commitCost.js';
import { type ProxyContext, ZERO_USAGE } from './context.js';
import { CostCap } from './costCap.js';
import type { Delivery } from './delivery.js';
import { finishRequest } from './finishRequest.js';
import { holdUntilContent } from './firstContent.js';
import { checkReceipt, checkUnpaidReceipt } from './receiptCheck.js';
import type { ResponsesState } from './responsesState.js';
import type { AttemptFailure } from './sellerFailure.js';
import { SellerTap } from './sellerTap.js';
import { isDoneChunk, streamErrorBytes } from './streamFailure.js';
import { ProgressJournal } from './streamProgress.js';
import { FinalResponseCatcher } from './usage.js';

/** What watches a stream as it is written to the client. */
interface StreamWatch {
  tap: SellerTap;
  cap: CostCap;
  progress: ProgressJournal | undefined;
  catcher: FinalResponseCatcher | undefined;
}

/** Writes the client's stream; the failure of the seller's stream, if any. */
async function pump(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  { tap, cap, progress, catcher }: StreamWatch,
): Promise<SvcError | undefined> {
  const { res } = ctx;
  const translated = candidate.sellerProtocol !== ctx.request.route.protocol;
  const failed = () => (cap.reached ? capError(cap) : tap.failure());
  try {
    const { translator } = ctx.service.deps;
    const chunks = translator.stream(
      ctx.request.route.protocol,
      candidate.sellerProtocol,
      cap.watch(tap),
    );
    for await (const chunk of chunks) {
      if (ctx.clientAbort.signal.aborted) return undefined;
      // A translated chat error is followed by `[DONE]`, which must not reach the client.
      if (translated && isDoneChunk(chunk) && failed()) continue;
      if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      progress?.tick();
      catcher?.push(chunk);
    }
  } catch (error) {
    if (!cap.reached) tap.thrown ??= error;
  }
  if (ctx.clientAbort.signal.aborted) return undefined;
  // A seller cut at the cap is not read further: it may never stop.
  if (!cap.reached) await tap.drain();
  const failure = failed();
  if (!failure && !translated && !res.destroyed) closeWholeChat(ctx, tap);
  if (!failure || res.destroyed) return failure;
  // The seller's own error event already reached the client when passed through untouched.
  const alreadySent =
    !translated && !cap.reached && tap.scanner.verdict === 'seller_error' && !tap.thrown;
  const translatorSent = translated && ctx.request.route.protocol !== 'openai-responses';
  if (!alreadySent && !translatorSent) {
    res.write(streamErrorBytes(ctx.request.route.protocol, failure, tap.scanner.events));
  }
  return failure;
}

/**
 * A whole chat answer (its finish reason passed) whose `[DONE]` never came, because the seller's
 * stream was cut right after its last event or the seller omits it: the client gets the `[DONE]`
 * its format ends with, so a whole answer never reads as a cut one.
 */
function closeWholeChat(ctx: ProxyContext, tap: SellerTap): void {
  const { scanner } = tap;
  if (scanner.verdict !== 'ended' || scanner.doneSeen) return;
  if (formatOfProtocol(ctx.request.route.protocol) !== 'chat') return;
  ctx.res.write(CHAT_DONE);
}

const CHAT_DONE = 'data: [DONE]\n\n';

function capError(cap: CostCap): SvcError {
  return new SvcError('max_cost_reached', { details: { maxCostUsd: cap.maxCostUsd } });
}

/**
 * A seller whose stream failed before any content: stopped, its payment freed (it delivered
 * nothing, so it bills nothing: src/formats/failedAnswer.ts). Its failure is recorded by the
 * caller, like one before the head.
 */
async function abandon(ctx: ProxyContext, { ok }: Delivery, tap: SellerTap): Promise<void> {
  ok.controller.abort(new Error('failed before its first content'));
  ok.detach();
  await tap.close();
  if (ok.paid) ctx.service.deps.payments.release?.(ctx.request.id);
}

/** Delivers a streamed answer; the failed attempt when the seller failed before any content. */
export async function deliverStream(
  ctx: ProxyContext,
  delivery: Delivery,
  affinityKey: string | undefined,
  responses: ResponsesState | undefined,
): Promise<AttemptFailure | undefined> {
  const { res, service } = ctx;
  const { candidate, ok } = delivery;
  const tap = new SellerTap(ok, candidate);
  const failedAttempt = await holdUntilContent(ctx, candidate.offer.peerId, tap);
  if (failedAttempt) {
    await abandon(ctx, delivery, tap);
    return failedAttempt;
  }
  const trailer = trailerOf(ok);
  res.writeHead(ok.response.status, {
    'content-type': ok.response.headers['content-type'] ?? 'text/event-stream',
    'cache-control': 'no-cache',
    ...sellerHeaders(ctx, candidate),
  });
  res.flushHeaders();
  const served = servedBy(candidate, true);
  // Journaled as open: a buyer restarted mid-stream still knows the request, and pays what its
  // journaled progress says was delivered (docs/decisions/154-late-voucher-after-a-crash.md).
  const open = { ...served, status: ok.response.status, completed: false, usage: ZERO_USAGE };
  journalOpen(ctx, open, ok.paid);
  // Already counted (memoised) when the request has a cap; not counted at all otherwise.
  const inputTokens = ok.maxCostMicro === undefined ? 0 : await ok.inputTokens();
  const cap = new CostCap({
    maxCostMicro: ok.maxCostMicro,
    price: ok.price,
    inputTokens,
    sellerProtocol: candidate.sellerProtocol,
  });
  const progress =
    ok.paid && ok.maxCostMicro !== undefined
      ? new ProgressJournal(
          ctx,
          open,
          {
            identity: ctx.request.access.identity,
            peerId: candidate.offer.peerId,
            price: ok.price,
            maxCostMicro: ok.maxCostMicro,
          },
          inputTokens,
          () => cap.outputTokens,
        )
      : undefined;
  // A translated responses stream is kept as the client saw it (its ids are the translator's).
  const translated = candidate.sellerProtocol !== ctx.request.route.protocol;
  const catcher = responses?.keeps && translated ? new FinalResponseCatcher() : undefined;
  const failure = await pump(ctx, candidate, { tap, cap, progress, catcher }).finally(() =>
    ok.detach(),
  );
  const cancelled = ctx.clientAbort.signal.aborted;
  if (cancelled || cap.reached) {
    ok.controller.abort(new Error(cancelled ? 'client cancelled' : 'cost cap reached'));
    await tap.close();
  }
  const { scanner } = tap;
  // A seller cut at the cap is not asked for its claim: the buyer pays its own count, capped.
  const claimed = cap.reached ? undefined : await trailer;
  const { usage, estimate } = await settleUsage(
    scanner.usage,
    claimed?.usage,
    ok.inputTokens,
    () => scanner.streamedText,
  );
  const errorCode = cancelled ? 'request_cancelled' : failure?.code;
  // A paid answer's receipt is checked before paying (decision 168), an unpaid one's after.
  const receipt = ok.paid ? checkReceipt(ctx, delivery, claimed) : undefined;
  const draft = {
    ...served,
    status: cancelled ? 499 : failure ? failure.status : ok.response.status,
    completed: !cancelled && !failure,
    usage,
    ...(errorCode ? { errorCode } : {}),
    ...(receipt ? { receipt } : {}),
  };
  // The delivered part is paid for, failed or not; a stream that failed before any content is
  // not (src/formats/failedAnswer.ts). The cost written is what was committed.
  const nothingDelivered = isFailedAnswer({
    outputTokens: usage.outputTokens,
    finished: scanner.verdict === 'ended',
    ...(scanner.readsContent ? { content: scanner.contentStarted } : {}),
  });
  const cost = await commitCost(ctx, delivery, {
    usage,
    claimed,
    estimate,
    draft,
    failed: nothingDelivered,
  });
  const costUsd = formatUsd(cost);
  if (!res.destroyed) {
    res.end(encodeUsageComment({ ...usage, costUsd, ...(errorCode ? { errorCode } : {}) }));
  }
  service.metrics.spend.inc(Number(cost));
  const late = await checkUnpaidReceipt(ctx, delivery, claimed);
  // Audits of real answers read the answer later, only if they sample it.
  const seen = service.audits.realAnswers ? { trailer: claimed, scanner } : undefined;
  finishRequest(ctx, { ...draft, ...late, costUsd }, delivery, seen);
  if (failure) {
    service.health.recordFailure(candidate.offer.peerId);
    service.metrics.sellerFailures.inc({ peer_id: candidate.offer.peerId, reason: failure.code });
  } else {
    rememberSeller(ctx, candidate, affinityKey);
    if (responses?.keeps && !cancelled) {
      const final = catcher ? catcher.finalEvent : scanner.finalEvent;
      responses.remember(candidate, final === undefined ? undefined : responseOfEvent(final));
    }
  }
  return undefined;
}

/** The response object of a responses stream's final event, or undefined. */
function responseOfEvent(data: string): unknown {
  try {
    return (JSON.parse(data) as { response?: unknown }).response;
  } catch {
    return undefined;
  }
}
