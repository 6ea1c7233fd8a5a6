/**
 * The request-record contract between the buyer and the gateway: `GET /_svc/requests/<id>`
 * answers a request's record (what the buyer committed to the seller for it, in vouchers), from
 * the buyer's journal, across buyer restarts. A 404 carries `x-svc-journal-since`: the buyer
 * keeps every record written since that time, so "no record" for a request started after it
 * proves the buyer committed nothing for it (docs/decisions/122-request-journal.md).
 */
import { z } from 'zod';

/** Path prefix of the record lookup. */
export const REQUEST_RECORD_PATH = '/_svc/requests/';

/** On a 404: epoch ms since when the buyer's journal holds every request it handled. */
export const JOURNAL_SINCE_HEADER = 'x-svc-journal-since';

const USD = /^\d{1,12}\.\d{6}$/;
const tokenCount = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const label = z.string().max(256);

export const requestRecordSchema = z.object({
  requestId: label,
  status: z.number().int().min(100).max(599),
  /** The request is over: `costUsd` is final. */
  completed: z.boolean(),
  streamed: z.boolean(),
  peerId: label.nullable(),
  provider: label.nullable(),
  serviceId: label.nullable(),
  model: label.nullable(),
  usage: z.object({
    inputTokens: tokenCount,
    cachedInputTokens: tokenCount,
    outputTokens: tokenCount,
    reasoningTokens: tokenCount.optional(),
  }),
  /** What the buyer committed to the seller for this request (its voucher increment). */
  costUsd: z.string().regex(USD),
  latencyMs: z.number().int().nonnegative(),
  /** Set when the request ended with an error: it is over, at the recorded cost. */
  errorCode: z.string().max(64).optional(),
  attempts: z.array(z.string().max(256)).max(64),
  /**
   * The seller's receipt of the answer: `verified`, or why the buyer refused it (decision 168);
   * absent when none was checked (no answer, or one cut before its trailer).
   */
  receipt: z.string().max(32).optional(),
  /** Epoch ms the record was written (journal retention). */
  at: z.number().int().nonnegative().optional(),
});

export type RequestRecord = z.infer<typeof requestRecordSchema>;

/** The path of one record. */
export function requestRecordPath(requestId: string): string {
  return `${REQUEST_RECORD_PATH}${encodeURIComponent(requestId)}`;
}

/** The record as sent and journaled. */
export function encodeRequestRecord(record: RequestRecord): string {
  return JSON.stringify(record);
}

/** Parses and validates a record; throws on anything else. */
export function decodeRequestRecord(text: string): RequestRecord {
  return requestRecordSchema.parse(JSON.parse(text));
}

/** `x-svc-journal-since` of a 404, or null when absent or malformed. */
export function journalSinceOf(value: string | string[] | undefined): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\d{1,16}$/.test(text)) return null;
  return Number(text);
}
