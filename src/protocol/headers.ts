/**
 * The buyer↔gateway HTTP headers: every `x-svc-*` name, the control headers the gateway sends
 * with a request, and the seller/usage headers the buyer sends with an answer (docs/guide/gateway.md "Gateway").
 * Both sides read and write them only through this module.
 */
import { z } from 'zod';

/** Every `x-svc-*` header name. */
export const SVC_HEADER = {
  // Request headers (client or gateway → buyer).
  pinPeer: 'x-svc-pin-peer',
  endUser: 'x-svc-end-user',
  buyerIdentity: 'x-svc-buyer-identity',
  gatewayAuth: 'x-svc-gateway-auth',
  requestId: 'x-svc-request-id',
  routingPolicy: 'x-svc-routing-policy',
  maxCostUsd: 'x-svc-max-cost-usd',
  /** `price`, `throughput` or `latency` (src/protocol/routingPolicy.ts ROUTING_SORTS). */
  sort: 'x-svc-sort',
  // Answer headers (buyer → gateway or client).
  peerId: 'x-svc-peer-id',
  provider: 'x-svc-provider',
  service: 'x-svc-service',
  /** The catalog name of the model that served (a fallback list's entry that answered). */
  model: 'x-svc-model',
  inputUsdPerMillion: 'x-svc-input-usd-per-million',
  outputUsdPerMillion: 'x-svc-output-usd-per-million',
  cachedInputUsdPerMillion: 'x-svc-cached-input-usd-per-million',
  imageUsd: 'x-svc-image-usd',
  videoUsd: 'x-svc-video-usd',
  peerReputation: 'x-svc-peer-reputation',
  attempts: 'x-svc-attempts',
  inputTokens: 'x-svc-input-tokens',
  cachedInputTokens: 'x-svc-cached-input-tokens',
  outputTokens: 'x-svc-output-tokens',
  totalTokens: 'x-svc-total-tokens',
  tokenSource: 'x-svc-token-source',
  estimatedCostUsd: 'x-svc-estimated-cost-usd',
  latencyMs: 'x-svc-latency-ms',
} as const;

/** Prefix of every header above: stripped from what clients send on, never forwarded upstream. */
export const SVC_HEADER_PREFIX = 'x-svc-';

type HeaderBag = Record<string, string | string[] | undefined>;

/** First value of a header (Node gives arrays for repeated headers). */
export function headerValue(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** What the gateway tells the buyer with each request. */
export const controlHeadersSchema = z.object({
  buyerIdentity: z.string().min(1),
  gatewayAuth: z.string().min(1),
  requestId: z.string().min(1).optional(),
  /** An encoded routing policy (src/protocol/routingPolicy.ts). */
  routingPolicy: z.string().min(1).optional(),
  /** Most the request may cost, a USD amount like "0.123456". */
  maxCostUsd: z.string().min(1).optional(),
});
export type ControlHeaders = z.infer<typeof controlHeadersSchema>;

const CONTROL_FIELDS = [
  'buyerIdentity',
  'gatewayAuth',
  'requestId',
  'routingPolicy',
  'maxCostUsd',
] as const;

type Field = keyof typeof SVC_HEADER;

/** The headers of the given fields that have a value. */
function encodeFields<F extends Field>(
  fields: readonly F[],
  values: Partial<Record<F, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of fields) {
    const value = values[field];
    if (value !== undefined) out[SVC_HEADER[field]] = value;
  }
  return out;
}

/** The given fields present (non-empty) in `headers`. */
function decodeFields<F extends Field>(
  fields: readonly F[],
  headers: HeaderBag,
): Partial<Record<F, string>> {
  const out: Partial<Record<F, string>> = {};
  for (const field of fields) {
    const value = headerValue(headers, SVC_HEADER[field]);
    if (value) out[field] = value;
  }
  return out;
}

export function encodeControlHeaders(control: ControlHeaders): Record<string, string> {
  return encodeFields(CONTROL_FIELDS, control);
}

/** The control headers present on a request (each one optional: the buyer checks the secret). */
export function decodeControlHeaders(headers: HeaderBag): Partial<ControlHeaders> {
  return decodeFields(CONTROL_FIELDS, headers);
}

/** The seller that served an answer and its prices (sent on streams too). */
export const sellerHeadersSchema = z.object({
  requestId: z.string(),
  peerId: z.string(),
  provider: z.string(),
  service: z.string(),
  model: z.string().optional(),
  inputUsdPerMillion: z.string().optional(),
  outputUsdPerMillion: z.string().optional(),
  cachedInputUsdPerMillion: z.string().optional(),
  imageUsd: z.string().optional(),
  videoUsd: z.string().optional(),
  peerReputation: z.string().optional(),
  attempts: z.string(),
});
export type SellerHeaders = z.infer<typeof sellerHeadersSchema>;

/** What a complete answer cost (not on streams: see src/protocol/usageComment.ts). */
export const usageHeadersSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  tokenSource: z.string(),
  estimatedCostUsd: z.string(),
});
export type UsageHeaders = z.infer<typeof usageHeadersSchema>;

const SELLER_FIELDS = Object.keys(sellerHeadersSchema.shape) as (keyof SellerHeaders)[];

export function encodeSellerHeaders(seller: SellerHeaders): Record<string, string> {
  return encodeFields(SELLER_FIELDS, seller);
}

/** The seller headers of an answer; fields absent from it are left out. */
export function decodeSellerHeaders(headers: HeaderBag): Partial<SellerHeaders> {
  return decodeFields(SELLER_FIELDS, headers);
}

export function encodeUsageHeaders(usage: UsageHeaders): Record<string, string> {
  return {
    [SVC_HEADER.inputTokens]: String(usage.inputTokens),
    [SVC_HEADER.cachedInputTokens]: String(usage.cachedInputTokens),
    [SVC_HEADER.outputTokens]: String(usage.outputTokens),
    [SVC_HEADER.totalTokens]: String(usage.inputTokens + usage.outputTokens),
    [SVC_HEADER.tokenSource]: usage.tokenSource,
    [SVC_HEADER.estimatedCostUsd]: usage.estimatedCostUsd,
  };
}

function tokens(text: string | undefined): number {
  const value = Number(text ?? 0);
  return Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/** The usage headers of an answer, or null when it carries no cost. */
export function decodeUsageHeaders(headers: HeaderBag): UsageHeaders | null {
  const estimatedCostUsd = headerValue(headers, SVC_HEADER.estimatedCostUsd);
  if (!estimatedCostUsd) return null;
  return {
    inputTokens: tokens(headerValue(headers, SVC_HEADER.inputTokens)),
    cachedInputTokens: tokens(headerValue(headers, SVC_HEADER.cachedInputTokens)),
    outputTokens: tokens(headerValue(headers, SVC_HEADER.outputTokens)),
    tokenSource: headerValue(headers, SVC_HEADER.tokenSource) ?? 'usage',
    estimatedCostUsd,
  };
}

/** How long the buyer took, as a header. */
export function latencyHeader(ms: number): Record<string, string> {
  return { [SVC_HEADER.latencyMs]: String(ms) };
}
