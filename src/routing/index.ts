/** Routing: targets and pins, preferences and policies, route selection, failover rules, affinity, health. */
export type { ReputationSource } from '../catalog/index.js';
export { AffinityStore, conversationKey } from './affinity.js';
export {
  actionForStatus,
  actionForTransportError,
  type FailoverAction,
  MAX_SAME_SELLER_TRIES,
  retryAfterMs,
} from './failover.js';
export { type FailureCause, type HealthOptions, HealthTracker } from './health.js';
export {
  type EffectivePreferences,
  narrowPreferences,
  ownPreferences,
  type PreferenceNarrowing,
  type PriceCaps,
  parseGatewayPolicy,
  pinPreferences,
  VIDEO_PRICE_CEILING_MICRO,
} from './preferences.js';
export {
  type RequestRouting,
  ROUTING_BODY_FIELDS,
  requestRouting,
  withoutRoutingFields,
} from './requestRouting.js';
export { type RouteState, RouteStateStore } from './routeState.js';
export {
  type Exclusion,
  exclusionReason,
  type ProtocolChooser,
  passThroughProtocol,
  preferenceExclusion,
  type RouteCandidate,
  type RoutePlan,
  type RouteRequest,
  selectRoute,
} from './selectRoute.js';
export { type SpeedSample, SpeedTracker } from './speed.js';
export {
  DEFAULT_ROUTE_MODEL,
  MODEL_VARIANTS,
  type PinSource,
  PRESET_PREFIX,
  parsePinHeader,
  parsePinnedModel,
  type ResolvedTarget,
  type ResolveTargetInput,
  type RoutingTarget,
  resolveTarget,
  resolveTargetCached,
  splitModelVariant,
} from './target.js';
