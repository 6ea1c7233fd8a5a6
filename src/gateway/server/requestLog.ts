/** Building and writing request-log rows (never secrets: no headers, no bodies). */
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
