/**
 * The `/svc/request/1` wire format; `/svc/request/2` repeats it, request after request, on one
 * stream (decision 190).
 * Request:  HEAD {method, path, headers, bodyLength, payment?} · DATA* · END
 * Response: HEAD {status, headers} · DATA* · TRAILER {usage?, costMicroUsd?, error?, receipt?}
 * Every JSON frame is validated; anything else closes the stream. The receipt is the seller's
 * signature over both (src/network/receipts.ts).
 */
import { z } from 'zod';
import {
  FrameError,
  FrameType,
  type FrameTypeValue,
  MAX_DATA_FRAME,
  parseJsonPayload,
} from './frames.js';
import { receiptSchema } from './receipts.js';
import type { SellerTrailer } from './types.js';

/** Largest request or response head. */
export const MAX_HEAD_BYTES = 64 * 1024;
/**
 * Largest trailer: the longest valid one (an `error` of 4,096 control characters, each escaped
 * in six bytes, and a receipt with the longest service id) is under 28 KiB.
 */
export const MAX_TRAILER_BYTES = 32 * 1024;

const headersSchema = z.record(z.string().max(256), z.string().max(16 * 1024));
// No control characters in a path: the receipt's request hash frames it with a newline.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control range is the point
const PATH = /^\/[^\u0000-\u001f\u007f]*$/;

export const requestHeadSchema = z.strictObject({
  method: z.string().regex(/^[A-Z]{1,16}$/),
  path: z.string().startsWith('/').max(4096).regex(PATH),
  headers: headersSchema,
  bodyLength: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  payment: z.record(z.string(), z.unknown()).optional(),
});
export type RequestHead = z.infer<typeof requestHeadSchema>;

export const responseHeadSchema = z.strictObject({
  status: z.number().int().min(100).max(599),
  headers: headersSchema,
});

const tokenCount = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
export const trailerSchema = z.strictObject({
  usage: z
    .strictObject({
      inputTokens: tokenCount,
      cachedInputTokens: tokenCount,
      outputTokens: tokenCount,
      reasoningTokens: tokenCount.optional(),
    })
    .optional(),
  costMicroUsd: z
    .string()
    .regex(/^\d{1,30}$/)
    .optional(),
  error: z.string().max(4096).optional(),
  receipt: receiptSchema.optional(),
}) satisfies z.ZodType<SellerTrailer>;

/** Frame size limits by type on both sides. */
export function frameLimit(type: FrameTypeValue): number {
  if (type === FrameType.data) return MAX_DATA_FRAME;
  if (type === FrameType.end) return 0;
  if (type === FrameType.trailer) return MAX_TRAILER_BYTES;
  return MAX_HEAD_BYTES;
}

/**
 * Parses a JSON frame payload with `schema`, or throws a protocol FrameError. `quick` (see
 * wireChecks.ts) accepts the common valid frames without zod; whatever it does not accept is
 * decided by the schema.
 */
export function parseFrame<T>(
  schema: z.ZodType<T>,
  payload: Uint8Array,
  what: string,
  quick?: (value: unknown) => boolean,
): T {
  const value = parseJsonPayload(payload);
  if (quick?.(value)) return value as T;
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new FrameError(
      'protocol',
      `invalid ${what}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}
