/**
 * A proxied chat-completions / responses / messages request: resolve the target, select the
 * route, try candidates with failover (429 first retried on the same seller), deliver.
 */
import { normalizeModelName } from '../catalog/index.js';
import { SvcError } from '../errors/index.js';
import { header, sendError } from '../http/index.js';
import {
  conversationKey,
  MAX_SAME_SELLER_TRIES,
  narrowPreferences,
  pinPreferences,
  resolveTarget,
  retryAfterMs,
  selectRoute,
} from '../routing/index.js';
import { applyPreset } from './applyPreset.js';
import { type AttemptOutcome, attemptSeller } from './attempt.js';
import { finishRequest, type ProxyContext, ZERO_USAGE } from './context.js';
import { deliver, responseAffinityKey } from './deliver.js';

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

/** Sends an error in the client's style and records it. */
export function failRequest(ctx: ProxyContext, error: SvcError): void {
  sendError(ctx.res, error, ctx.route.style, {
    'x-svc-request-id': ctx.requestId,
    ...(ctx.attempts.length ? { 'x-svc-attempts': ctx.attempts.join(', ') } : {}),
  });
  const peerId = typeof error.details?.peerId === 'string' ? error.details.peerId : null;
  finishRequest(ctx, {
    status: error.status,
    completed: false,
    streamed: false,
    peerId,
    provider: null,
    serviceId: null,
    model: typeof ctx.body.model === 'string' ? ctx.body.model : null,
    usage: ZERO_USAGE,
    costUsd: '0.000000',
    errorCode: error.code,
  });
}

/** Handles one proxied request end to end. */
export async function proxyRequest(ctx: ProxyContext): Promise<void> {
  const { service } = ctx;
  const { deps } = service;
  const model = ctx.body.model;
  if (model !== undefined && typeof model !== 'string') {
    throw new SvcError('invalid_request', {
      message: '"model" must be a string.',
      details: { param: 'model' },
    });
  }
  const state = service.state.read();
  const pinHeader = header(ctx.req.headers, 'x-svc-pin-peer');
  const resolved = resolveTarget({
    model,
    ...(pinHeader ? { pinHeader } : {}),
    ...(state.sessionPin ? { sessionPin: state.sessionPin } : {}),
    ...(state.defaultRoute ? { defaultRoute: state.defaultRoute } : {}),
    presets: deps.config.presets,
  });
  const { target } = resolved;
  let body = ctx.body;
  let own = service.ownPreferences;
  if (resolved.preset) {
    body = applyPreset(body, ctx.route.protocol, resolved.preset.config);
    if (resolved.preset.config.routingPreferences) {
      own = narrowPreferences(own, resolved.preset.config.routingPreferences);
    }
  }
  const preferences =
    target.kind === 'pinned'
      ? pinPreferences(own, ctx.policy)
      : ctx.policy
        ? narrowPreferences(own, ctx.policy)
        : own;
  const conversation = conversationKey(body, ctx.req.headers);
  const affinityKey =
    conversation && target.kind === 'automatic'
      ? `${normalizeModelName(target.model)}|${conversation}`
      : undefined;
  // A responses-API follow-up goes back to the seller holding the previous response.
  const previousResponse = body.previous_response_id;
  const affinityPeerId =
    typeof previousResponse === 'string'
      ? service.affinity.get(responseAffinityKey(previousResponse))
      : affinityKey
        ? service.affinity.get(affinityKey)
        : undefined;
  const plan = selectRoute({
    target,
    routeType: 'text',
    clientProtocol: ctx.route.protocol,
    chooseProtocol: deps.translator.chooseProtocol,
    index: service.offers(),
    preferences,
    reputation: deps.reputation,
    health: service.health,
    ...(affinityPeerId ? { affinityPeerId } : {}),
    bodyBytes: ctx.bodyBytes,
    maxCandidates: deps.config.maxAttempts,
  });

  let last: Extract<AttemptOutcome, { kind: 'failed' }> | undefined;
  candidates: for (const candidate of plan.candidates) {
    for (let tries = 1; ; tries++) {
      if (ctx.clientAbort.signal.aborted) break candidates;
      const outcome = await attemptSeller(ctx, candidate, body);
      if (outcome.kind === 'ok') {
        await deliver(ctx, candidate, outcome, affinityKey);
        return;
      }
      last = outcome;
      ctx.attempts.push(`${candidate.offer.peerId}@${candidate.offer.serviceId}:${outcome.label}`);
      if (outcome.action === 'cancelled') break candidates;
      if (outcome.action === 'next' || outcome.action === 'same') {
        service.health.recordFailure(candidate.offer.peerId);
        service.metrics.sellerFailures.inc({
          peer_id: candidate.offer.peerId,
          reason: outcome.label,
        });
      }
      if (outcome.action === 'stop') break candidates;
      if (outcome.action === 'same' && tries < MAX_SAME_SELLER_TRIES) {
        const waitMs = retryAfterMs(
          outcome.retryAfter,
          deps.config.retryAfterMaxSeconds * 1000,
          deps.clock(),
        );
        if (waitMs !== undefined) {
          await sleep(waitMs, ctx.clientAbort.signal);
          continue;
        }
      }
      // 'next', or 'same' with no acceptable wait left: the next ranked offer (never for pins).
      if (plan.pinned) break candidates;
      continue candidates;
    }
  }
  if (ctx.clientAbort.signal.aborted || last?.action === 'cancelled') {
    finishRequest(ctx, {
      status: 499,
      completed: false,
      streamed: false,
      peerId: null,
      provider: null,
      serviceId: null,
      model: model ?? null,
      usage: ZERO_USAGE,
      costUsd: '0.000000',
      errorCode: 'request_cancelled',
    });
    if (!ctx.res.headersSent) ctx.res.destroy();
    return;
  }
  failRequest(ctx, last?.error ?? new SvcError('seller_error'));
}
