/**
 * The `x-svc-routing-policy` header: the gateway's merged policy for one key, as the buyer
 * applies it. Value: base64url of the JSON below. Narrowing only restricts (src/routing).
 */
import { z } from 'zod';
import { SvcError } from '../errors/index.js';

const usd = z.number().finite().nonnegative().optional();

/** Hard price caps in USD (tokens per million, images and videos each); the gateway stores these. */
export const MAX_PRICING_FIELDS = {
  inputUsdPerMillion: usd,
  outputUsdPerMillion: usd,
  cachedInputUsdPerMillion: usd,
  imageUsd: usd,
  videoUsd: usd,
};

/**
 * How automatic routing orders eligible sellers (docs/decisions/150-routing-by-speed.md): by
 * price (the default), by measured output tokens per second, or by measured time to first token.
 */
export const ROUTING_SORTS = ['price', 'throughput', 'latency'] as const;
export type RoutingSort = (typeof ROUTING_SORTS)[number];

export const routingPolicySchema = z.object({
  sort: z.enum(ROUTING_SORTS).optional(),
  minTrustScore: z.number().min(0).max(100).optional(),
  maxPricing: z.object(MAX_PRICING_FIELDS).optional(),
  allowedPeerIds: z.array(z.string()).optional(),
  blockedPeerIds: z.array(z.string()).optional(),
  preferFreeSellers: z.boolean().optional(),
  allowedModels: z.array(z.string()).optional(),
});

/** A partial preference set that narrows another (gateway policy, preset). */
export type RoutingPolicyWire = z.infer<typeof routingPolicySchema>;

export function encodeRoutingPolicy(policy: RoutingPolicyWire): string {
  return Buffer.from(JSON.stringify(routingPolicySchema.parse(policy))).toString('base64url');
}

/** Decodes a header value; 400 `invalid_request` when malformed. */
export function decodeRoutingPolicy(header: string): RoutingPolicyWire {
  try {
    const json: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    return routingPolicySchema.parse(json);
  } catch (cause) {
    throw new SvcError('invalid_request', {
      message: 'x-svc-routing-policy is not base64url-encoded policy JSON.',
      cause,
    });
  }
}
