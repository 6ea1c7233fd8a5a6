/** `buyer` section: the local buyer proxy (spec 4.2, 8). */
import { z } from 'zod';
import { portSchema, routingPreferencesSchema } from './common.js';

/** A named preset, used as `model: "@preset/<name>"`. */
export const presetSchema = z.strictObject({
  /** Model (or `<peer>@<service>`) the preset routes to. */
  model: z.string().min(1),
  /** System prompt prepended to the conversation. */
  system: z.string().optional(),
  /** Default request parameters (the request's own values win). */
  params: z.record(z.string(), z.unknown()).default({}),
  /** Routing preferences that narrow the buyer's own. */
  routingPreferences: routingPreferencesSchema.partial().optional(),
});

export const buyerSchema = z.strictObject({
  /** Always loopback: the buyer has no keys, so it must never listen on a public interface. */
  host: z.enum(['127.0.0.1', '::1', 'localhost']).default('127.0.0.1'),
  port: portSchema.default(8377),
  /** Ingress body cap; larger requests get 413 before the body is read. */
  bodyLimitBytes: z
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
  routingPreferences: routingPreferencesSchema.prefault({}),
  presets: z.record(z.string().regex(/^[A-Za-z0-9._-]+$/), presetSchema).default({}),
});

export type BuyerConfig = z.infer<typeof buyerSchema>;
export type PresetConfig = z.infer<typeof presetSchema>;
