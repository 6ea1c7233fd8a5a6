/**
 * What a request cost, as the buyer reports it (src/protocol): usage headers for answers, the
 * closing usage comment for streams, and the request record from the buyer's journal
 * (`GET /_svc/requests/<id>`) when neither arrived.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { readStreamBody } from '../../http/index.js';
import { type MicroUsd, parseUsd } from '../../money/index.js';
import {
  decodeRequestRecord,
  decodeUsageComment,
  decodeUsageHeaders,
  JOURNAL_SINCE_HEADER,
  journalSinceOf,
  type RequestRecord,
  requestRecordPath,
} from '../../protocol/index.js';
import type { TokenCounts } from '../store/types.js';

export interface CostReport {
  costMicro: MicroUsd;
  usage: TokenCounts;
}

/** Cost from the usage headers of a non-streaming answer, or null when absent. */
export function costFromHeaders(headers: IncomingHttpHeaders): CostReport | null {
  const usage = decodeUsageHeaders(headers);
  if (!usage) return null;
  try {
    return {
      costMicro: parseUsd(usage.estimatedCostUsd),
      usage: {
        inputTokens: usage.inputTokens,
        cachedInputTokens: usage.cachedInputTokens,
        outputTokens: usage.outputTokens,
      },
    };
  } catch {
    return null;
  }
}

/** A stream's closing usage comment as a report; `errorCode` when the stream failed. */
export interface StreamReport extends CostReport {
  errorCode?: string;
}

/** Watches passing SSE bytes (without changing them) for the buyer's usage comment. */
export class SseUsageScanner {
  private carry = '';
  report: StreamReport | null = null;

  push(chunk: Buffer): void {
    if (this.report) return;
    const text = this.carry + chunk.toString('latin1');
    const lines = text.split('\n');
    this.carry = (lines.pop() ?? '').slice(-4096);
    for (const line of lines) {
      // A malformed comment is treated as missing: the lookup decides.
      const comment = decodeUsageComment(line);
      if (!comment) continue;
      try {
        this.report = {
          costMicro: parseUsd(comment.costUsd),
          usage: {
            inputTokens: comment.inputTokens,
            cachedInputTokens: comment.cachedInputTokens,
            outputTokens: comment.outputTokens,
          },
          ...(comment.errorCode ? { errorCode: comment.errorCode } : {}),
        };
      } catch {
        // an unparsable amount: missing as well
      }
    }
  }
}

export interface LookupOptions {
  attempts?: number;
  intervalMs?: number;
}

/** The most of a request record read from the buyer (a record is a few KiB). */
const MAX_RECORD_BYTES = 1024 * 1024;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The buyer has no record of the request: it never routed it, so it paid nobody for it. */
export const UNKNOWN_TO_BUYER = 'unknown' as const;

/** What one `GET /_svc/requests/<id>` said (src/protocol/requestRecord.ts). */
export type RecordLookup =
  | { kind: 'record'; record: RequestRecord }
  /** 404: no record; the buyer's journal holds every request since `journalSinceMs` (null: unsaid). */
  | { kind: 'unknown'; journalSinceMs: number | null }
  | { kind: 'unavailable' };

/** One lookup of a request record. */
export async function lookupRecord(buyer: Dispatcher, requestId: string): Promise<RecordLookup> {
  try {
    const response = await buyer.request({
      method: 'GET',
      path: requestRecordPath(requestId),
      headersTimeout: 2000,
      bodyTimeout: 2000,
    });
    const text = (await readStreamBody(response.body, MAX_RECORD_BYTES)).toString('utf8');
    if (response.statusCode === 404) {
      return {
        kind: 'unknown',
        journalSinceMs: journalSinceOf(response.headers[JOURNAL_SINCE_HEADER]),
      };
    }
    if (response.statusCode !== 200) return { kind: 'unavailable' };
    return { kind: 'record', record: decodeRequestRecord(text) };
  } catch {
    return { kind: 'unavailable' };
  }
}

/** The cost report of a record. */
export function reportOfRecord(record: RequestRecord): CostReport {
  return {
    costMicro: parseUsd(record.costUsd),
    usage: {
      inputTokens: record.usage.inputTokens,
      cachedInputTokens: record.usage.cachedInputTokens,
      outputTokens: record.usage.outputTokens,
    },
  };
}

/**
 * Asks the buyer what `requestId` cost, polling until it completes. Returns the report,
 * `UNKNOWN_TO_BUYER` when the buyer answered 404 every time, or null when it cannot say.
 */
export async function lookupCost(
  buyer: Dispatcher,
  requestId: string,
  options: LookupOptions = {},
): Promise<CostReport | typeof UNKNOWN_TO_BUYER | null> {
  const attempts = options.attempts ?? 20;
  let unknown = true;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(options.intervalMs ?? 50);
    const looked = await lookupRecord(buyer, requestId);
    if (looked.kind === 'unknown') continue;
    unknown = false;
    if (looked.kind === 'unavailable') return null;
    // A request still streaming is neither completed nor failed yet: ask again.
    if (!looked.record.completed && !looked.record.errorCode) continue;
    return reportOfRecord(looked.record);
  }
  return unknown ? UNKNOWN_TO_BUYER : null;
}

/** A report, or null when the lookup could not produce one. */
export function reportOf(result: CostReport | typeof UNKNOWN_TO_BUYER | null): CostReport | null {
  return result === null || result === UNKNOWN_TO_BUYER ? null : result;
}
