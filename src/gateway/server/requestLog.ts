/**
 * Building request-log rows (never secrets: no headers, no bodies), and the facts request steps
 * return for them.
 */
import { randomUUID } from 'node:crypto';
import { timeHex } from '../../protocol/index.js';
import type { LogRow } from '../store/types.js';

/**
 * A time-ordered UUID (version 7: 48 bits of unix ms, then random bits) for a log row. Rows are
 * inserted in time order, so the primary-key index grows at its end: a batch of rows dirties a
 * page or two instead of one random page per row (fewer WAL pages, shorter checkpoints).
 */
export function newLogId(at: number): string {
  const random = randomUUID();
  const ms = timeHex(at);
  return `${ms.slice(0, 8)}-${ms.slice(8)}-7${random.slice(15)}`;
}

/** An empty row for a request that just arrived. */
export function newLogRow(input: {
  at: number;
  method: string;
  route: string;
  clientAddress: string | null;
}): LogRow {
  return {
    id: newLogId(input.at),
    at: input.at,
    requestId: null,
    keyId: null,
    workspaceId: null,
    memberId: null,
    endUser: null,
    clientAddress: input.clientAddress,
    method: input.method,
    route: input.route.slice(0, 200),
    requestedModel: null,
    servedModel: null,
    peerId: null,
    provider: null,
    serviceId: null,
    status: 0,
    errorCode: null,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    costMicro: 0n,
    latencyMs: null,
    ttfbMs: null,
    streamed: false,
  };
}

/**
 * What a step of a request learned for its log row (docs/decisions/188-gateway-steps-return-
 * facts.md). Steps return facts; only `handleRequest` writes the row.
 */
export type LogFacts = Partial<
  Omit<LogRow, 'id' | 'at' | 'method' | 'route' | 'clientAddress' | 'latencyMs'>
>;

/**
 * A step's failure with the facts it knew when it failed (request id, model, reservation, seller):
 * the row of a request that failed midway still shows them. `cause` is what was thrown.
 */
export class FailedStep extends Error {
  constructor(
    override readonly cause: unknown,
    readonly facts: LogFacts,
  ) {
    super('request step failed', { cause });
  }
}

/** The error thrown and the facts it carries (none for an error that is not a FailedStep). */
export function failureFacts(error: unknown): { cause: unknown; facts: LogFacts } {
  return error instanceof FailedStep
    ? { cause: error.cause, facts: error.facts }
    : { cause: error, facts: {} };
}
