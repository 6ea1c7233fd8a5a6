/** `seller` section: a seller node and the upstream providers it resells. */
import { z } from 'zod';
import { tokenPricingSchema, usdNumberSchema } from './common.js';

export const PROVIDER_TYPES = [
  'openai-chat',
  'openai-responses',
  'anthropic-messages',
  'openai-images',
  'demo',
  // --- media (video jobs, decision models) ---
  'video',
  'systemone',
] as const;
export const API_PROTOCOLS = [
  'openai-chat-completions',
  'openai-responses',
  'anthropic-messages',
  'openai-images',
  'video-queue',
  'fal-video',
  'systemone',
] as const;

/** Limits and features of a service, announced to buyers. */
export const serviceCapabilitiesSchema = z.strictObject({
  contextLength: z.number().int().positive().optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  inputModalities: z.array(z.string()).optional(),
  outputModalities: z.array(z.string()).optional(),
  toolUse: z.boolean().optional(),
  supportedParameters: z.array(z.string()).optional(),
});

export const serviceSchema = z.strictObject({
  /** Model id the upstream API expects (default: the service id). */
  upstreamModel: z.string().min(1).optional(),
  pricing: tokenPricingSchema.optional(),
  categories: z.array(z.string()).default([]),
  capabilities: serviceCapabilitiesSchema.optional(),
  /** Per generated image (openai-images services; announced in serviceUnitBillingModels). */
  imageUsd: usdNumberSchema.optional(),
  /** Per delivered video (video services; buyers refuse above 5.00 USD). */
  videoUsd: usdNumberSchema.optional(),
});

export const providerSchema = z
  .strictObject({
    type: z.enum(PROVIDER_TYPES),
    /** Provider name shown to buyers (default: the type). */
    name: z.string().min(1).optional(),
    baseUrl: z.url().optional(),
    /** Name of the environment variable holding the upstream API key (never the key itself). */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name')
      .optional(),
    services: z.record(z.string().min(1), serviceSchema),
    defaultPricing: tokenPricingSchema,
    maxConcurrency: z.number().int().positive().default(16),
  })
  // --- media: a video provider has no vendor default upstream ---
  .refine((provider) => provider.type !== 'video' || provider.baseUrl !== undefined, {
    message: 'a video provider needs baseUrl (its upstream video API root)',
    path: ['baseUrl'],
  });

export const sellerSchema = z.strictObject({
  displayName: z.string().max(100).default('svc seller'),
  region: z.string().max(50).optional(),
  /** Largest request body accepted (advertised so buyers refuse early with 413). */
  uploadLimitBytes: z
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
  providers: z.array(providerSchema).max(32).default([]),
});

export type SellerConfig = z.infer<typeof sellerSchema>;
export type ProviderConfig = z.infer<typeof providerSchema>;
export type ServiceConfig = z.infer<typeof serviceSchema>;
