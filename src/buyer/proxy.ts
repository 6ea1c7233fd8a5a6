/**
 * A proxied chat-completions / responses / messages request: resolve the target, select the
 * route, try candidates with failover (429 first retried on the same seller), deliver.
 */
import { normalizeModelName } from '../catalog/index.js';
import { headerValue, SVC_HEADER } from '../protocol/index.js';
import {
  conversationKey,
  type EffectivePreferences,
  narrowPreferences,
  type PreferenceNarrowing,
  pinPreferences,
  type ResolvedTarget,
  type RoutePlan,
  type RoutingTarget,
  requestRouting,
  resolveTargetCached,
  selectRoute,
  withoutRoutingFields,
} from '../routing/index.js';
import { applyPreset } from './applyPreset.js';
import type { ProxyContext } from './context.js';
import { deliver } from './deliver.js';
import { fallbackPlan, requestedModels } from './fallbackModels.js';
import { openResponsesState, type ResponsesState } from './responsesState.js';
import { textCall } from './textCall.js';
import { SPARE_CANDIDATES, tryCandidates } from './tryCandidates.js';

/** Effective preferences: own, narrowed by a preset and the gateway policy (pins keep bans only). */
export function effectivePreferences(
  own: EffectivePreferences,
  target: RoutingTarget,
  policy: PreferenceNarrowing | undefined,
): EffectivePreferences {
  if (target.kind === 'pinned') return pinPreferences(own, policy);
  return policy ? narrowPreferences(own, policy) : own;
}

/**
 * Preferences with the request's own choices: its `max_price` narrows; its sort (model suffix,
 * then body `sort`, then `x-svc-sort`) wins over a preset's, which wins over the gateway policy's
 * and the buyer's (docs/decisions/150-routing-by-speed.md).
 */
export function requestPreferences(
  ctx: ProxyContext,
  resolved: ResolvedTarget,
  base: EffectivePreferences,
): EffectivePreferences {
  const own = requestRouting(
    ctx.request.body,
    headerValue(ctx.request.head.headers, SVC_HEADER.sort),
  );
  let preferences = own.narrowing ? narrowPreferences(base, own.narrowing) : base;
  const sort = resolved.variantSort ?? own.sort ?? resolved.preset?.config.routingPreferences?.sort;
  if (sort && sort !== preferences.sort) preferences = { ...preferences, sort };
  return preferences;
}

/** One model of the request, routed: its plan, the body its sellers get, its affinity key. */
interface RoutedTextModel {
  plan: RoutePlan;
  body: Record<string, unknown>;
  affinityKey: string | undefined;
}

function routeModel(
  ctx: ProxyContext,
  model: string | undefined,
  responses: ResponsesState | undefined,
): RoutedTextModel {
  const { service } = ctx;
  const { deps } = service;
  const state = service.state.read();
  const { pin } = ctx.request.limits;
  const resolved = resolveTargetCached({
    model,
    ...(pin ? { pinHeader: pin } : {}),
    ...(state.sessionPin ? { sessionPin: state.sessionPin } : {}),
    ...(state.defaultRoute ? { defaultRoute: state.defaultRoute } : {}),
    presets: deps.config.presets,
  });
  const { target } = resolved;
  let body = withoutRoutingFields(ctx.request.body);
  let own = service.ownPreferences;
  if (resolved.preset) {
    body = applyPreset(body, ctx.request.route.protocol, resolved.preset.config);
    if (resolved.preset.config.routingPreferences) {
      own = narrowPreferences(own, resolved.preset.config.routingPreferences);
    }
  }
  const preferences = requestPreferences(
    ctx,
    resolved,
    effectivePreferences(own, target, ctx.request.limits.policy),
  );
  const conversation = conversationKey(body, ctx.request.head.headers);
  const affinityKey =
    conversation && target.kind === 'automatic'
      ? `${normalizeModelName(target.model)}|${conversation}`
      : undefined;
  // A responses-API follow-up prefers the seller that served the previous response.
  const affinityPeerId =
    responses?.affinityPeerId ?? (affinityKey ? service.affinity.get(affinityKey) : undefined);
  const plan = selectRoute({
    target,
    routeType: 'text',
    clientProtocol: ctx.request.route.protocol,
    chooseProtocol: deps.translator.chooseProtocol,
    index: service.offers(),
    preferences,
    reputation: deps.reputation,
    health: service.health,
    speed: service.speed,
    audits: service.audits,
    ...(affinityPeerId ? { affinityPeerId } : {}),
    bodyBytes: ctx.request.bodyBytes,
    maxCandidates: deps.config.maxAttempts,
    spareCandidates: SPARE_CANDIDATES,
  });
  return { plan, body, affinityKey };
}

/**
 * Handles one proxied request end to end (a `models` list: each model in order). A responses
 * request's stored state is checked first (400 for an unknown id) and, per seller, passed through
 * or expanded (src/buyer/responsesState.ts).
 */
export async function proxyRequest(ctx: ProxyContext): Promise<void> {
  const responses = openResponsesState(ctx);
  const models = requestedModels(ctx.request.body);
  const { plan, of } = fallbackPlan(models, (model) => routeModel(ctx, model, responses));
  await tryCandidates(
    ctx,
    plan,
    (candidate) => {
      const { body } = of(candidate);
      return textCall(ctx, candidate, responses ? responses.bodyFor(candidate, body) : body);
    },
    (delivery) => deliver(ctx, delivery, of(delivery.candidate).affinityKey, responses),
  );
}
