/**
 * Failover over a route plan, the same for text and media (docs/decisions/052-failover.md): a 429
 * is first retried on the same seller (Retry-After honoured), retryable failures move to the next
 * ranked candidate (never for pins), health and metrics record each failure; a stream that failed
 * before its first content counts as a failure before the head. Ends with the answer delivered,
 * or the request failed / cancelled.
 */
import { SvcError } from '../errors/index.js';
import { MAX_TOKENS_THAT_FIT } from '../protocol/index.js';
import {
  type FailureCause,
  MAX_SAME_SELLER_TRIES,
  type RouteCandidate,
  type RoutePlan,
  retryAfterMs,
} from '../routing/index.js';
import {
  type AttemptFailure,
  type AttemptOutcome,
  type SellerCall,
  sendToSeller,
} from './attempt.js';
import { type ProxyContext, ZERO_USAGE } from './context.js';
import type { Delivery } from './delivery.js';
import { failRequest } from './failRequest.js';
import { finishRequest } from './finishRequest.js';
import { LOCK_EXHAUSTED } from './sellerFailure.js';

/** The call to a candidate, or why it cannot be sent (e.g. over the gateway's max cost). */
export type BuildCall = (
  candidate: RouteCandidate,
) => SellerCall | AttemptFailure | Promise<SellerCall | AttemptFailure>;
/** Delivers an answer; the failed attempt when a stream failed before its first content. */
export type Deliver = (delivery: Delivery) => Promise<AttemptFailure | undefined>;

/** Spare candidates a plan keeps for sellers that cannot be reached (`spareCandidates`). */
export const SPARE_CANDIDATES = 3;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * A failure before any answer that the connection explains (no dial, the protocol refused, the
 * connection dropped): forgotten once the seller is back (src/routing/health.ts).
 */
function failureCause(outcome: AttemptFailure): FailureCause {
  return outcome.label === 'unreachable' || outcome.label === 'reset' ? 'connection' : 'answer';
}

/** Records one failed attempt; true when the same seller is tried again (after a wait). */
async function noteFailure(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  outcome: AttemptFailure,
  tries: number,
): Promise<boolean> {
  const { service } = ctx;
  const { offer } = candidate;
  ctx.attempts.push(`${offer.peerId}@${offer.serviceId}:${outcome.label}`);
  if (
    (outcome.action === 'next' || outcome.action === 'same') &&
    outcome.label !== LOCK_EXHAUSTED
  ) {
    service.health.recordFailure(offer.peerId, failureCause(outcome));
    service.metrics.sellerFailures.inc({ peer_id: offer.peerId, reason: outcome.label });
  }
  if (outcome.action !== 'same' || tries >= MAX_SAME_SELLER_TRIES) return false;
  const { config } = service.deps;
  const waitMs = retryAfterMs(
    outcome.retryAfter,
    config.retryAfterMaxSeconds * 1000,
    service.deps.clock(),
  );
  if (waitMs === undefined) return false;
  await sleep(waitMs, ctx.clientAbort.signal);
  return true;
}

/** The most output tokens a skipped offer could have taken (the cheapest offer's), or -1. */
function tokensThatFit(failure: AttemptFailure): number {
  const fit = failure.error.details?.[MAX_TOKENS_THAT_FIT];
  return typeof fit === 'number' ? fit : -1;
}

/**
 * 'delivered', or the failure to answer (undefined when nothing was tried): the last seller's,
 * or, when every offer was skipped as over the cost cap, the one saying the most tokens fit.
 */
async function firstAnswer(
  ctx: ProxyContext,
  plan: RoutePlan,
  build: BuildCall,
  deliver: Deliver,
): Promise<'delivered' | AttemptFailure | undefined> {
  const attempt = async (candidate: RouteCandidate): Promise<AttemptOutcome> => {
    const call = await build(candidate);
    return 'kind' in call ? call : sendToSeller(ctx, candidate, call);
  };
  let last: AttemptFailure | undefined;
  let skipped: AttemptFailure | undefined;
  const { clock } = ctx.service.deps;
  // A candidate that could not be reached at all (the request never left the buyer, as when a
  // seller just died) gives its place to the next ranked spare: it costs the seller nothing, and
  // the request should not fail while a seller that is up was ranked just below the limit.
  const queue = [...plan.candidates];
  const spares = plan.pinned ? [] : [...(plan.spares ?? [])];
  for (let next = 0; next < queue.length; next++) {
    const candidate = queue[next]!;
    for (let tries = 1; ; tries++) {
      if (ctx.clientAbort.signal.aborted) return last ?? skipped;
      const sentAt = clock();
      const answer = await attempt(candidate);
      // A stream that failed before its first content reached nobody: it fails like one before
      // its head (docs/decisions/217-a-stream-starts-with-its-first-content.md).
      const outcome =
        answer.kind === 'ok'
          ? await deliver({ candidate, ok: answer, sentAt, headAt: clock() })
          : answer;
      if (outcome === undefined) return 'delivered';
      if (outcome.action === 'skip') {
        // Never sent: not a try (no x-svc-attempts entry, nothing against the seller).
        if (!skipped || tokensThatFit(outcome) > tokensThatFit(skipped)) skipped = outcome;
        if (plan.pinned) return last ?? skipped;
        break;
      }
      last = outcome;
      if (outcome.label === 'unreachable' && spares.length > 0) queue.push(spares.shift()!);
      const again = await noteFailure(ctx, candidate, outcome, tries);
      if (outcome.action === 'cancelled' || outcome.action === 'stop') return last;
      if (again) continue;
      // 'next', or 'same' with no acceptable wait left: the next ranked offer (never for pins).
      if (plan.pinned) return last;
      break;
    }
  }
  return last ?? skipped;
}

/** Tries the plan's candidates until one answer is delivered; otherwise fails the request. */
export async function tryCandidates(
  ctx: ProxyContext,
  plan: RoutePlan,
  build: BuildCall,
  deliver: Deliver,
): Promise<void> {
  const last = await firstAnswer(ctx, plan, build, deliver);
  if (last === 'delivered') return;
  if (ctx.clientAbort.signal.aborted || last?.action === 'cancelled') {
    const model = ctx.request.body.model;
    finishRequest(ctx, {
      status: 499,
      completed: false,
      streamed: false,
      peerId: null,
      provider: null,
      serviceId: null,
      model: typeof model === 'string' ? model : null,
      usage: ZERO_USAGE,
      costUsd: '0.000000',
      errorCode: 'request_cancelled',
    });
    if (!ctx.res.headersSent) ctx.res.destroy();
    return;
  }
  failRequest(ctx, last?.error ?? new SvcError('seller_error'));
}
