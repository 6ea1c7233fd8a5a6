/** Schema pieces shared by several config sections. */
import { z } from 'zod';
import { isPeerId, parsePeerId } from '../../identity/peerId.js';
import { usdNumberToMicro } from '../../money/index.js';
import { ROUTING_SORTS } from '../../protocol/routingPolicy.js';

/** A peer id in any accepted spelling, normalised to 40 lower-case hex. */
export const peerIdSchema = z
  .string()
  .refine(isPeerId, { message: 'expected a peer id: 40 hex characters, with or without 0x' })
  .transform((text) => parsePeerId(text));

/** A TCP port; 0 picks a free one. */
export const portSchema = z.number().int().min(0).max(65535);

/** A USD amount per million tokens (or per unit), non-negative, at most 6 decimals. */
export const usdNumberSchema = z
  .number()
  .finite()
  .nonnegative()
  .refine(
    (value) => {
      try {
        usdNumberToMicro(value);
        return true;
      } catch {
        return false;
      }
    },
    { message: 'expected a USD amount with at most 6 decimals' },
  );

/** A USD amount as a decimal string ("2", "2.50"). */
export const usdStringSchema = z
  .string()
  .regex(/^\d+(\.\d{1,6})?$/, 'expected a USD amount like "2" or "2.50" (at most 6 decimals)');

/** Token pricing as announced in peer metadata (USD per million tokens). */
export const tokenPricingSchema = z.strictObject({
  inputUsdPerMillion: usdNumberSchema,
  outputUsdPerMillion: usdNumberSchema,
  cachedInputUsdPerMillion: usdNumberSchema.optional(),
});

/** Hard price caps; an offer above any cap is never routed to. */
export const maxPricingSchema = z.strictObject({
  inputUsdPerMillion: usdNumberSchema.optional(),
  outputUsdPerMillion: usdNumberSchema.optional(),
  cachedInputUsdPerMillion: usdNumberSchema.optional(),
  /** Per generated image. */
  imageUsd: usdNumberSchema.optional(),
  /** Per generated video (the buyer never pays more than 5.00 USD regardless: VIDEO_PRICE_CEILING_MICRO). */
  videoUsd: usdNumberSchema.optional(),
});

/** Routing preferences. */
export const routingPreferencesSchema = z.strictObject({
  /** Sellers scoring below this are skipped; unscored sellers are excluded (0 admits everyone). */
  minTrustScore: z.number().min(0).max(100).default(60),
  maxPricing: maxPricingSchema.optional(),
  /** When non-empty, only these sellers are used. */
  allowedPeerIds: z.array(peerIdSchema).default([]),
  blockedPeerIds: z.array(peerIdSchema).default([]),
  /** Rank free sellers first among equals. */
  preferFreeSellers: z.boolean().default(false),
  /** Order of eligible sellers: `price` (default), `throughput` or `latency` (measured). */
  sort: z.enum(ROUTING_SORTS).optional(),
});
