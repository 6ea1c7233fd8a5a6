/**
 * Writes a seller's successful answer to the client: a whole answer with its usage headers here,
 * a stream in deliverStream.ts; the seller is paid (src/buyer/commitCost.ts) before the cost is
 * written, then the record, health and affinity.
 */
import { SvcError } from '../errors/index.js';
import { isFailedAnswer, wholeAnswerFinished } from '../formats/index.js';
import { formatUsd } from '../money/index.js';
import { encodeUsageHeaders, latencyHeader } from '../protocol/index.js';
import { rememberSeller, sellerHeaders, servedBy, settleUsage, trailerOf } from './answerParts.js';
import { commitCost } from './commitCost.js';
import type { ProxyContext } from './context.js';
import { deliverStream } from './deliverStream.js';
import type { Delivery } from './delivery.js';
import { finishRequest } from './finishRequest.js';
import { checkReceipt, checkUnpaidReceipt } from './receiptCheck.js';
import type { ResponsesState } from './responsesState.js';
import type { AttemptFailure } from './sellerFailure.js';
import { textOf } from './tokenCount.js';
import { usageFromBody } from './usage.js';

/** The seller's whole answer in the client's protocol (translated when they differ). */
function clientBody(
  ctx: ProxyContext,
  { candidate, ok }: Delivery,
  sellerJson: unknown,
): { bytes: Buffer; json: unknown } {
  const whole = ok.whole ?? Buffer.alloc(0);
  if (candidate.sellerProtocol === ctx.request.route.protocol)
    return { bytes: whole, json: sellerJson };
  try {
    const { translator } = ctx.service.deps;
    const json = translator.response(
      ctx.request.route.protocol,
      candidate.sellerProtocol,
      sellerJson,
    );
    return { bytes: Buffer.from(JSON.stringify(json)), json };
  } catch (cause) {
    if (ok.paid) ctx.service.deps.payments.release?.(ctx.request.id);
    throw new SvcError('invalid_seller_response', {
      message: `Seller ${candidate.offer.peerId} sent a ${candidate.sellerProtocol} response that could not be translated.`,
      details: { peerId: candidate.offer.peerId },
      cause,
    });
  }
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Delivers a whole (non-stream) answer. */
async function deliverWhole(
  ctx: ProxyContext,
  delivery: Delivery,
  affinityKey: string | undefined,
  responses: ResponsesState | undefined,
): Promise<void> {
  const { candidate, ok } = delivery;
  ok.detach();
  const { res } = ctx;
  const { response } = ok;
  const trailer = trailerOf(ok);
  const sellerJson = parseJson(ok.whole ?? Buffer.alloc(0));
  const { bytes, json } = clientBody(ctx, delivery, sellerJson);
  const claimed = await trailer;
  const { usage, source, estimate } = await settleUsage(
    usageFromBody(candidate.sellerProtocol, sellerJson),
    claimed?.usage,
    ok.inputTokens,
    // What the seller delivered (before translation, which may drop e.g. thinking blocks).
    () => textOf(sellerJson ?? ''),
  );
  const failed = isFailedAnswer({
    outputTokens: usage.outputTokens,
    finished: wholeAnswerFinished(candidate.sellerProtocol, sellerJson),
  });
  // A paid answer's receipt is checked before paying (decision 168), an unpaid one's after.
  const receipt = ok.paid ? checkReceipt(ctx, delivery, claimed) : undefined;
  // Paid before the cost is written: the header shows what the seller was committed.
  const draft = {
    ...servedBy(candidate, false),
    status: response.status,
    completed: true,
    usage,
    ...(receipt ? { receipt } : {}),
  };
  const cost = await commitCost(ctx, delivery, { usage, claimed, estimate, draft, failed });
  const costUsd = formatUsd(cost);
  res.writeHead(response.status, {
    'content-type': response.headers['content-type'] ?? 'application/json',
    'content-length': bytes.length,
    ...sellerHeaders(ctx, candidate),
    ...encodeUsageHeaders({ ...usage, tokenSource: source, estimatedCostUsd: costUsd }),
    ...latencyHeader(ctx.service.deps.clock() - ctx.request.startedAt),
  });
  res.end(bytes);
  ctx.service.metrics.spend.inc(Number(cost));
  const late = await checkUnpaidReceipt(ctx, delivery, claimed);
  // Audits of real answers read the answer later, only if they sample it.
  const seen = ctx.service.audits.realAnswers ? { trailer: claimed } : undefined;
  finishRequest(ctx, { ...draft, ...late, costUsd }, delivery, seen);
  rememberSeller(ctx, candidate, affinityKey);
  responses?.remember(candidate, json);
}

/**
 * Delivers a successful seller response (whole or streamed); the failed attempt when a stream
 * failed before its first content (nothing reached the client: the next seller may answer).
 */
export async function deliver(
  ctx: ProxyContext,
  delivery: Delivery,
  affinityKey: string | undefined,
  responses?: ResponsesState,
): Promise<AttemptFailure | undefined> {
  if (!delivery.ok.whole) return deliverStream(ctx, delivery, affinityKey, responses);
  await deliverWhole(ctx, delivery, affinityKey, responses);
  return undefined;
}
