/**
 * What a request cost, as the buyer reports it (src/protocol): usage headers for answers, the
 * closing usage comment for streams, and `GET /_svc/requests/<id>` when neither arrived.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { type MicroUsd, parseUsd } from '../../money/index.js';
import { decodeUsageComment, decodeUsageHeaders } from '../../protocol/index.js';
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

const recordSchema = z.object({
  completed: z.boolean(),
  costUsd: z.string(),
  peerId: z.string().nullish(),
  provider: z.string().nullish(),
  serviceId: z.string().nullish(),
  model: z.string().nullish(),
  /** Set when the buyer answered with an error: the request is over, at the recorded cost. */
  errorCode: z.string().nullish(),
  usage: z.object({
    inputTokens: z.number(),
    cachedInputTokens: z.number().default(0),
    outputTokens: z.number(),
  }),
});

export interface LookupOptions {
  attempts?: number;
  intervalMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The buyer has no record of the request: it never routed it, so it paid nobody for it. */
export const UNKNOWN_TO_BUYER = 'unknown' as const;

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
    try {
      const response = await buyer.request({
        method: 'GET',
        path: `/_svc/requests/${encodeURIComponent(requestId)}`,
        headersTimeout: 2000,
        bodyTimeout: 2000,
      });
      const text = await response.body.text();
      if (response.statusCode === 404) continue;
      unknown = false;
      if (response.statusCode !== 200) return null;
      const record = recordSchema.parse(JSON.parse(text));
      // A request still streaming is neither completed nor failed yet: ask again.
      if (!record.completed && !record.errorCode) continue;
      return {
        costMicro: parseUsd(record.costUsd),
        usage: {
          inputTokens: record.usage.inputTokens,
          cachedInputTokens: record.usage.cachedInputTokens,
          outputTokens: record.usage.outputTokens,
        },
      };
    } catch {
      return null;
    }
  }
  return unknown ? UNKNOWN_TO_BUYER : null;
}

/** A report, or null when the lookup could not produce one. */
export function reportOf(result: CostReport | typeof UNKNOWN_TO_BUYER | null): CostReport | null {
  return result === null || result === UNKNOWN_TO_BUYER ? null : result;
}
