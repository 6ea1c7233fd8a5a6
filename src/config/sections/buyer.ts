/** `buyer` section: the local buyer proxy. */
import { z } from 'zod';
import { portSchema, routingPreferencesSchema, usdNumberSchema } from './common.js';

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

/**
 * Audits of the model each seller serves (docs/guide/trust.md): requests in the shape of
 * the buyer's own, with new words, sent to the seller and to other sellers of the same model,
 * paid by the same identity within a daily allowance.
 */
export const auditSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Share of delivered answers followed by an audit of the seller that served them. */
  sampleRate: z.number().min(0).max(1).default(0.05),
  /** Most audits may spend a day, in USD, counted over the last 7 days. */
  dailyBudgetUsd: usdNumberSchema.default(0.25),
  /** Above 1 lets audits spend more than the answers they check (small test networks). */
  maxShareOfSpend: z.number().min(0).max(100).default(0.02),
  /**
   * Longest wait before an audit request is sent, in ms. Waits are drawn from the gaps between
   * the buyer's own requests, so audits arrive at the pace of its traffic; small test networks
   * lower this to see verdicts sooner.
   */
  maxDelayMs: z.number().int().min(0).max(3_600_000).default(600_000),
  /**
   * Audit real answers (docs/decisions/221-audits-of-real-answers.md): a sampled request is sent
   * again, byte for byte, to the references, and the audited seller's own answer to it is judged.
   * Sends users' request content to two or three more sellers, so off unless the buyer opts in.
   */
  realAnswers: z.boolean().default(false),
});

/**
 * The responses the buyer returned on `/v1/responses`, kept on this machine per identity so that
 * `previous_response_id` and `item_reference` work whichever seller serves the follow-up
 * (docs/decisions/173-responses-state-kept-by-the-buyer.md). Never sent anywhere.
 */
export const responseStoreSchema = z.strictObject({
  /** Most bytes of stored responses kept per identity; the oldest go first (0 keeps none). */
  maxBytes: z
    .number()
    .int()
    .min(0)
    .default(256 * 1024 * 1024),
  /** Responses older than this are removed. */
  maxAgeDays: z.number().positive().default(30),
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
  /** Most a seller's whole (non-stream) answer may hold; larger answers fail over. */
  answerLimitBytes: z
    .number()
    .int()
    .positive()
    .default(128 * 1024 * 1024),
  routingPreferences: routingPreferencesSchema.prefault({}),
  /**
   * A seller that sends no response head within this time is treated as failed (failover).
   * Non-streaming heads arrive after the whole completion, so this is generous.
   */
  sellerHeadTimeoutSeconds: z.number().positive().default(120),
  /**
   * Most a streamed answer's head is held while the seller sends only its preamble (a role-only
   * chunk, `message_start`, pings): a seller failing before its first content is failed over
   * unseen; past this the stream is committed as it is. 0: never held (decision 217).
   */
  headHoldSeconds: z.number().min(0).max(60).default(10),
  /** Ranked sellers tried for one request (1 = no failover). */
  maxAttempts: z.number().int().min(1).max(10).default(3),
  /** A 429 is retried on the same seller when its Retry-After is at most this long. */
  retryAfterMaxSeconds: z.number().min(0).default(10),
  presets: z.record(z.string().regex(/^[A-Za-z0-9._-]+$/), presetSchema).default({}),
  audit: auditSchema.prefault({}),
  /**
   * Share of free answers whose seller receipt is checked, drawn at random; paid answers, audits
   * and every answer of a seller refused in the last hour are always checked (decision 181).
   */
  receiptCheckShare: z.number().min(0.01).max(1).default(0.125),
  responseStore: responseStoreSchema.prefault({}),
});

export type BuyerConfig = z.infer<typeof buyerSchema>;
export type AuditConfig = z.infer<typeof auditSchema>;
export type ResponseStoreConfig = z.infer<typeof responseStoreSchema>;
export type PresetConfig = z.infer<typeof presetSchema>;
