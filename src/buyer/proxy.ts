/**
 * A proxied chat-completions / responses / messages request: resolve the target, select the
 * route, try candidates with failover (429 first retried on the same seller), deliver.
 */
import { normalizeModelName } from '../catalog/index.js';
import { SvcError } from '../errors/index.js';
import { headerValue, SVC_HEADER } from '../protocol/index.js';
import {
  conversationKey,
  type EffectivePreferences,
  narrowPreferences,
  type PreferenceNarrowing,
  pinPreferences,
  type RoutingTarget,
  resolveTarget,
  selectRoute,
} from '../routing/index.js';
import { applyPreset } from './applyPreset.js';
import type { ProxyContext } from './context.js';
import { deliver, responseAffinityKey } from './deliver.js';
import { textCall } from './textCall.js';
import { tryCandidates } from './tryCandidates.js';

export { failRequest } from './failRequest.js';

/** Effective preferences: own, narrowed by a preset and the gateway policy (pins keep bans only). */
export function effectivePreferences(
  own: EffectivePreferences,
  target: RoutingTarget,
  policy: PreferenceNarrowing | undefined,
): EffectivePreferences {
  if (target.kind === 'pinned') return pinPreferences(own, policy);
  return policy ? narrowPreferences(own, policy) : own;
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
  const pinHeader = headerValue(ctx.req.headers, SVC_HEADER.pinPeer);
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
  const preferences = effectivePreferences(own, target, ctx.policy);
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

  await tryCandidates(
    ctx,
    plan,
    (candidate) => textCall(ctx, candidate, body),
    (candidate, ok) => deliver(ctx, candidate, ok, affinityKey),
  );
}
