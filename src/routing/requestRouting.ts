/**
 * Routing choices one request makes for itself (docs/decisions/150-routing-by-speed.md): `sort`
 * in the body or the `x-svc-sort` header, and `max_price` in the body (USD per million tokens
 * for `prompt` / `completion`, per item for `image` / `video`). The buyer removes them, and a
 * fallback list `models` (src/buyer/fallbackModels.ts), before the body goes to a seller.
 */
import { z } from 'zod';
import { SvcError } from '../errors/index.js';
import { ROUTING_SORTS, type RoutingSort } from '../protocol/index.js';
import type { PreferenceNarrowing } from './preferences.js';

const usd = z.number().finite().nonnegative().max(1_000_000).optional();
const maxPriceSchema = z.strictObject({
  prompt: usd,
  completion: usd,
  image: usd,
  video: usd,
});

/** Body fields that steer routing and are never forwarded. */
export const ROUTING_BODY_FIELDS = ['sort', 'max_price', 'models'] as const;

export interface RequestRouting {
  sort?: RoutingSort;
  /** The request's own price caps (they only narrow). */
  narrowing?: PreferenceNarrowing;
}

function parseSort(value: unknown, param: string): RoutingSort {
  if (typeof value === 'string' && (ROUTING_SORTS as readonly string[]).includes(value)) {
    return value as RoutingSort;
  }
  throw new SvcError('invalid_request', {
    message: `${param} must be one of ${ROUTING_SORTS.join(', ')}.`,
    details: { param },
  });
}

/** The request's routing choices; 400 `invalid_request` when malformed. */
export function requestRouting(
  body: Record<string, unknown>,
  sortHeader: string | undefined,
): RequestRouting {
  const out: RequestRouting = {};
  if (body.sort !== undefined) out.sort = parseSort(body.sort, 'sort');
  else if (sortHeader !== undefined) out.sort = parseSort(sortHeader.trim(), 'x-svc-sort');
  if (body.max_price !== undefined) {
    const parsed = maxPriceSchema.safeParse(body.max_price);
    if (!parsed.success) {
      throw new SvcError('invalid_request', {
        message:
          '"max_price" must be an object of non-negative USD amounts: prompt and completion per million tokens, image and video per item.',
        details: { param: 'max_price' },
      });
    }
    const max = parsed.data;
    const maxPricing: NonNullable<PreferenceNarrowing['maxPricing']> = {};
    if (max.prompt !== undefined) {
      maxPricing.inputUsdPerMillion = max.prompt;
      maxPricing.cachedInputUsdPerMillion = max.prompt;
    }
    if (max.completion !== undefined) maxPricing.outputUsdPerMillion = max.completion;
    if (max.image !== undefined) maxPricing.imageUsd = max.image;
    if (max.video !== undefined) maxPricing.videoUsd = max.video;
    out.narrowing = { maxPricing };
  }
  return out;
}

/** The body without the routing-only fields (what a seller receives). */
export function withoutRoutingFields(body: Record<string, unknown>): Record<string, unknown> {
  if (!ROUTING_BODY_FIELDS.some((field) => field in body)) return body;
  const copy = { ...body };
  for (const field of ROUTING_BODY_FIELDS) delete copy[field];
  return copy;
}
