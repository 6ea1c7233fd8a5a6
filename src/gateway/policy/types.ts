/** A routing policy: what one level (workspace, member, key, preset) allows. Levels only narrow. */
import { z } from 'zod';
import { MAX_PRICING_FIELDS } from '../../protocol/index.js';

export const routingPolicySchema = z.strictObject({
  allowedPeerIds: z.array(z.string().regex(/^(0x)?[0-9a-fA-F]{40}$/)).optional(),
  blockedPeerIds: z.array(z.string().regex(/^(0x)?[0-9a-fA-F]{40}$/)).optional(),
  minTrustScore: z.number().min(0).max(100).optional(),
  maxPricing: z.strictObject(MAX_PRICING_FIELDS).optional(),
  allowedModels: z.array(z.string().min(1)).optional(),
  /**
   * Sort preference: `price` (default), `free-first` (preferFreeSellers for the buyer), or the
   * measured `throughput` / `latency` (docs/decisions/150-routing-by-speed.md).
   */
  sort: z.enum(['price', 'free-first', 'throughput', 'latency']).optional(),
});

/** A routing policy as stored and merged. */
export type RoutingPolicy = z.infer<typeof routingPolicySchema>;
