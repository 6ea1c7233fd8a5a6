/**
 * Model fallback lists (docs/decisions/151-model-fallback-lists.md): `models: ["a", "b", …]` in a
 * chat, responses or messages body. Each model is routed on its own (its preset, pins, sellers);
 * a model that cannot be routed at all (no seller, not allowed, wrong type) is skipped; the
 * candidates of the rest are tried in the list's order under the usual failover rules.
 */
import { isSvcError, SvcError } from '../errors/index.js';
import type { RouteCandidate, RoutePlan } from '../routing/index.js';

/** Most models one request may list. */
export const MAX_FALLBACK_MODELS = 8;

/**
 * The models a request names, in order: `model`, then each of `models` not already named. One
 * entry (possibly undefined: no model at all) when the body has no `models` list.
 */
export function requestedModels(body: Record<string, unknown>): (string | undefined)[] {
  const { model, models } = body;
  if (model !== undefined && typeof model !== 'string') {
    throw new SvcError('invalid_request', {
      message: '"model" must be a string.',
      details: { param: 'model' },
    });
  }
  if (models === undefined) return [model];
  if (
    !Array.isArray(models) ||
    models.length === 0 ||
    models.length > MAX_FALLBACK_MODELS ||
    !models.every((entry) => typeof entry === 'string' && entry.length > 0 && entry.length <= 256)
  ) {
    throw new SvcError('invalid_request', {
      message: `"models" must be a list of 1 to ${MAX_FALLBACK_MODELS} model names.`,
      details: { param: 'models' },
    });
  }
  const list: string[] = model ? [model] : [];
  for (const entry of models as string[]) if (!list.includes(entry)) list.push(entry);
  return list;
}

/** One model's route and what its candidates need. */
export interface RoutedModel {
  plan: RoutePlan;
}

/**
 * Routes every model of the list and joins their candidates in list order; `of` gives the routed
 * model a candidate came from. Throws the first model's error when none can be routed.
 */
export function fallbackPlan<T extends RoutedModel>(
  models: readonly (string | undefined)[],
  route: (model: string | undefined) => T,
): { plan: RoutePlan; of: (candidate: RouteCandidate) => T } {
  const owners = new Map<RouteCandidate, T>();
  const candidates: RouteCandidate[] = [];
  let first: T | undefined;
  let firstError: unknown;
  for (const model of models) {
    let routed: T;
    try {
      routed = route(model);
    } catch (error) {
      if (!isSvcError(error)) throw error;
      firstError ??= error;
      continue;
    }
    first ??= routed;
    for (const candidate of routed.plan.candidates) {
      owners.set(candidate, routed);
      candidates.push(candidate);
    }
  }
  if (!first) throw firstError;
  const head = first;
  // A single model keeps its plan (a pin never fails over); a list always may move on.
  const plan: RoutePlan =
    models.length === 1 ? head.plan : { ...head.plan, pinned: false, candidates };
  return { plan, of: (candidate) => owners.get(candidate) ?? head };
}
