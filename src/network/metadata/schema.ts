/**
 * Strict validation of received peer records. Anything outside these limits is
 * rejected as a whole: a record is either fully trusted or not used at all.
 */
import { z } from 'zod';
import { tokenPricingSchema, usdNumberSchema } from '../../config/index.js';
import { METADATA_VERSION, type PeerMetadata } from '../types.js';

/** Largest accepted record, in bytes of JSON. */
export const MAX_METADATA_BYTES = 64 * 1024;
export const MAX_PROVIDERS = 32;
/** Largest number of services across all providers of one record. */
export const MAX_SERVICES = 256;
/** Records signed longer ago than this are stale (replays). */
export const MAX_METADATA_AGE_MS = 30 * 60 * 1000;
/** Records dated further ahead than this are refused (clock abuse). */
export const MAX_METADATA_FUTURE_MS = 5 * 60 * 1000;

const pricingSchema = tokenPricingSchema.refine(
  (p) =>
    p.cachedInputUsdPerMillion === undefined || p.cachedInputUsdPerMillion <= p.inputUsdPerMillion,
  { message: 'cached input price above input price' },
);

// A stranger's names are printed by `svc network browse` and the console: no control characters
// (a NUL, or an escape sequence that rewrites the terminal).
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control range is the point
const NO_CONTROL = /^[^\u0000-\u001f\u007f-\u009f]*$/;
const printable = (max: number) => z.string().max(max).regex(NO_CONTROL, 'control character');
const shortText = printable(200);
const serviceId = printable(200).min(1);

const apiProtocolSchema = z.enum([
  'openai-chat-completions',
  'openai-responses',
  'anthropic-messages',
  'openai-images',
  'video-queue',
  'fal-video',
  'systemone',
]);

const serviceCapabilitiesSchema = z.strictObject({
  contextLength: z.number().int().positive().optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  architecture: shortText.optional(),
  inputModalities: z.array(shortText).max(16).optional(),
  outputModalities: z.array(shortText).max(16).optional(),
  toolUse: z.boolean().optional(),
  supportedParameters: z.array(shortText).max(64).optional(),
});

const providerSchema = z
  .strictObject({
    provider: printable(100).min(1),
    services: z.array(serviceId).max(MAX_SERVICES),
    defaultPricing: pricingSchema,
    servicePricing: z.record(serviceId, pricingSchema).optional(),
    serviceCategories: z.record(serviceId, z.array(shortText).max(16)).optional(),
    serviceApiProtocols: z.record(serviceId, z.array(apiProtocolSchema).max(8)).optional(),
    serviceUnitBillingModels: z
      .record(
        serviceId,
        z.strictObject({
          imageUsd: usdNumberSchema.optional(),
          videoUsd: usdNumberSchema.optional(),
        }),
      )
      .optional(),
    serviceCapabilities: z.record(serviceId, serviceCapabilitiesSchema).optional(),
    maxConcurrency: z.number().int().positive().max(1_000_000),
    currentLoad: z.number().int().nonnegative(),
  })
  .refine((p) => p.currentLoad <= p.maxConcurrency, {
    message: 'currentLoad above maxConcurrency',
  });

/** The signed record as received (timestamp freshness is checked separately, against a clock). */
export const peerMetadataSchema = z
  .strictObject({
    peerId: z.string().regex(/^[0-9a-f]{40}$/, 'expected 40 lower-case hex characters'),
    version: z.literal(METADATA_VERSION),
    displayName: printable(100),
    providers: z.array(providerSchema).max(MAX_PROVIDERS),
    capabilities: z.strictObject({
      uploadLimitBytes: z.number().int().positive(),
      demo: z.boolean().optional(),
      payments: z
        .strictObject({
          chainId: z.number().int().positive(),
          paymentsContract: z.string().regex(/^0x[0-9a-fA-F]{40}$/) as z.ZodType<`0x${string}`>,
        })
        .optional(),
    }),
    region: printable(50).optional(),
    timestamp: z.number().int().nonnegative(),
    verifications: z.record(z.string(), z.unknown()).optional(),
    signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/) as z.ZodType<`0x${string}`>,
  })
  .refine((m) => m.providers.reduce((total, p) => total + p.services.length, 0) <= MAX_SERVICES, {
    message: `more than ${MAX_SERVICES} services`,
  }) satisfies z.ZodType<PeerMetadata>;
