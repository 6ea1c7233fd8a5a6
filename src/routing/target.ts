/**
 * What a request asks to be routed to:
 * header `x-svc-pin-peer` first, then a `<peer_id>@<service_id>` model, then the session pin;
 * otherwise automatic routing by model name.
 */
import type { PresetConfig } from '../config/index.js';
import { SvcError } from '../errors/index.js';
import { isPeerId, type PeerId, parsePeerId } from '../identity/index.js';
import { type RoutingSort, SVC_HEADER } from '../protocol/index.js';

/** Model value that follows the persisted default route. */
export const DEFAULT_ROUTE_MODEL = 'svc';
export const PRESET_PREFIX = '@preset/';

export type PinSource = 'header' | 'model' | 'session';

export type RoutingTarget =
  | {
      kind: 'pinned';
      peerId: PeerId;
      /** The seller's service id or a model name to look up at that seller; absent: its best offer. */
      model?: string;
      source: PinSource;
    }
  | { kind: 'automatic'; model: string };

export interface ResolveTargetInput {
  /** The request body's `model` (undefined when missing). */
  model: string | undefined;
  /** `x-svc-pin-peer`: `<peer_id>` or `<peer_id>@<service_id>`. */
  pinHeader?: string;
  sessionPin?: PeerId;
  defaultRoute?: string;
  presets: Record<string, PresetConfig>;
}

export interface ResolvedTarget {
  target: RoutingTarget;
  /** The preset named by `@preset/<name>`, to apply to the body. */
  preset?: { name: string; config: PresetConfig };
  /** The sort a `:floor` / `:nitro` model suffix asks for. */
  variantSort?: RoutingSort;
}

/** Model suffixes that choose a sort (docs/decisions/150-routing-by-speed.md). */
export const MODEL_VARIANTS: Readonly<Record<string, RoutingSort>> = {
  ':floor': 'price',
  ':nitro': 'throughput',
};

/** `model` without a `:floor` / `:nitro` suffix, and the sort the suffix asks for. */
export function splitModelVariant(model: string): { model: string; sort?: RoutingSort } {
  for (const [suffix, sort] of Object.entries(MODEL_VARIANTS)) {
    if (model.length > suffix.length && model.endsWith(suffix)) {
      return { model: model.slice(0, -suffix.length), sort };
    }
  }
  return { model };
}

/** `<peer_id>@<service_id>` split, or undefined when the value is not in that form. */
export function parsePinnedModel(model: string): { peerId: PeerId; serviceId: string } | undefined {
  const at = model.indexOf('@');
  if (at <= 0) return undefined;
  const peer = model.slice(0, at);
  const serviceId = model.slice(at + 1);
  if (!isPeerId(peer) || serviceId.length === 0) return undefined;
  return { peerId: parsePeerId(peer), serviceId };
}

/** `x-svc-pin-peer`: a peer id, or `<peer_id>@<service_id>`; 400 `invalid_request` otherwise. */
export function parsePinHeader(value: string): { peerId: PeerId; serviceId?: string } {
  const trimmed = value.trim();
  const pinned = parsePinnedModel(trimmed);
  if (pinned) return pinned;
  if (isPeerId(trimmed)) return { peerId: parsePeerId(trimmed) };
  throw new SvcError('invalid_request', {
    message: `x-svc-pin-peer "${trimmed}" is not a peer id (40 hex characters, with or without 0x) or <peer_id>@<service_id>.`,
    details: { param: SVC_HEADER.pinPeer },
  });
}

/** Resolves `svc`, presets and pins into one routing target. */
export function resolveTarget(input: ResolveTargetInput): ResolvedTarget {
  let model = input.model?.trim() || undefined;
  let preset: ResolvedTarget['preset'];
  if (model === DEFAULT_ROUTE_MODEL) {
    if (!input.defaultRoute) throw new SvcError('no_default_route');
    model = input.defaultRoute;
  }
  if (model?.startsWith(PRESET_PREFIX)) {
    const name = model.slice(PRESET_PREFIX.length);
    const config = input.presets[name];
    if (!config) {
      const known = Object.keys(input.presets);
      throw new SvcError('unknown_preset', {
        message: `No preset named "${name}". ${known.length ? `Known presets: ${known.join(', ')}.` : 'No presets are configured (buyer.presets).'}`,
        details: { preset: name, knownPresets: known },
      });
    }
    preset = { name, config };
    model = config.model === DEFAULT_ROUTE_MODEL ? input.defaultRoute : config.model;
    if (!model) throw new SvcError('no_default_route');
  }
  let variantSort: RoutingSort | undefined;
  if (model) ({ model, sort: variantSort } = splitModelVariant(model));
  const modelPin = model ? parsePinnedModel(model) : undefined;
  const headerPin = input.pinHeader ? parsePinHeader(input.pinHeader) : undefined;
  const withPreset = (target: RoutingTarget): ResolvedTarget => ({
    target,
    ...(preset ? { preset } : {}),
    ...(variantSort ? { variantSort } : {}),
  });

  if (headerPin) {
    const pinnedModel = headerPin.serviceId ?? modelPin?.serviceId ?? model;
    return withPreset({
      kind: 'pinned',
      peerId: headerPin.peerId,
      source: 'header',
      ...(pinnedModel ? { model: pinnedModel } : {}),
    });
  }
  if (modelPin) {
    return withPreset({
      kind: 'pinned',
      peerId: modelPin.peerId,
      model: modelPin.serviceId,
      source: 'model',
    });
  }
  if (input.sessionPin) {
    return withPreset({
      kind: 'pinned',
      peerId: input.sessionPin,
      source: 'session',
      ...(model ? { model } : {}),
    });
  }
  if (!model) throw new SvcError('missing_routing_target');
  return withPreset({ kind: 'automatic', model });
}

/** Resolved targets by input, per presets object: the same few model names arrive again and again. */
const resolvedByPresets = new WeakMap<object, Map<string, ResolvedTarget>>();
const RESOLVED_MAX = 1_000;

/**
 * `resolveTarget`, remembered for equal inputs (the result is frozen and shared); a target that
 * cannot be resolved throws every time.
 */
export function resolveTargetCached(input: ResolveTargetInput): ResolvedTarget {
  const key = `${input.model ?? ''}\u0000${input.pinHeader ?? ''}\u0000${input.sessionPin ?? ''}\u0000${input.defaultRoute ?? ''}`;
  if (key.length > 1_024) return resolveTarget(input);
  let known = resolvedByPresets.get(input.presets);
  if (!known) {
    known = new Map();
    resolvedByPresets.set(input.presets, known);
  }
  const hit = known.get(key);
  if (hit) return hit;
  const resolved = resolveTarget(input);
  Object.freeze(resolved.target);
  if (resolved.preset) Object.freeze(resolved.preset);
  Object.freeze(resolved);
  if (known.size >= RESOLVED_MAX) known.clear();
  known.set(key, resolved);
  return resolved;
}
