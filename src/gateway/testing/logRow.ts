/** A request log row for store tests. */
import type { LogRow } from '../store/types.js';

let counter = 0;
const unique = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

/** A request log row of `keyId` at `at`. */
export function logRow(keyId: string | null, at: number, extra: Partial<LogRow> = {}): LogRow {
  return {
    id: unique('log'),
    at,
    requestId: unique('req'),
    keyId,
    workspaceId: 'ws_x',
    memberId: null,
    endUser: null,
    clientAddress: '127.0.0.1',
    method: 'POST',
    route: '/v1/chat/completions',
    requestedModel: 'gpt-x',
    servedModel: 'gpt-x',
    peerId: null,
    provider: null,
    serviceId: null,
    status: 200,
    errorCode: null,
    inputTokens: 1,
    cachedInputTokens: 0,
    outputTokens: 2,
    costMicro: 100n,
    latencyMs: 5,
    ttfbMs: 2,
    streamed: false,
    ...extra,
  };
}
