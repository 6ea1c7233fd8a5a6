/** Building and writing request-log rows (never secrets: no headers, no bodies). */
import { randomUUID } from 'node:crypto';
import type { LogRow } from '../store/types.js';

/** An empty row for a request that just arrived. */
export function newLogRow(input: {
  at: number;
  method: string;
  route: string;
  clientAddress: string | null;
}): LogRow {
  return {
    id: randomUUID(),
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
