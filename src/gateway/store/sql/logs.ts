/** The request log: one row per request, refused ones included; never a secret. */
import type { LogFilter, LogRow, UsageDimension, UsageSummaryRow } from '../types.js';
import { boolOf, numberOrNull } from './rows.js';
import {
  bigintOf,
  numberOf,
  type SqlExecutor,
  type SqlParam,
  type SqlRow,
  textOrNull,
} from './SqlDb.js';

const COLUMNS = [
  'id',
  'at',
  'request_id',
  'key_id',
  'workspace_id',
  'member_id',
  'end_user',
  'client_address',
  'method',
  'route',
  'requested_model',
  'served_model',
  'peer_id',
  'provider',
  'service_id',
  'status',
  'error_code',
  'input_tokens',
  'cached_input_tokens',
  'output_tokens',
  'cost',
  'latency_ms',
  'ttfb_ms',
  'streamed',
] as const;

const INSERT = `INSERT INTO request_log (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;

function logOf(row: SqlRow): LogRow {
  return {
    id: String(row.id),
    at: numberOf(row.at),
    requestId: textOrNull(row.request_id),
    keyId: textOrNull(row.key_id),
    workspaceId: textOrNull(row.workspace_id),
    memberId: textOrNull(row.member_id),
    endUser: textOrNull(row.end_user),
    clientAddress: textOrNull(row.client_address),
    method: String(row.method),
    route: String(row.route),
    requestedModel: textOrNull(row.requested_model),
    servedModel: textOrNull(row.served_model),
    peerId: textOrNull(row.peer_id),
    provider: textOrNull(row.provider),
    serviceId: textOrNull(row.service_id),
    status: numberOf(row.status),
    errorCode: textOrNull(row.error_code),
    inputTokens: numberOf(row.input_tokens),
    cachedInputTokens: numberOf(row.cached_input_tokens),
    outputTokens: numberOf(row.output_tokens),
    costMicro: bigintOf(row.cost),
    latencyMs: numberOrNull(row.latency_ms),
    ttfbMs: numberOrNull(row.ttfb_ms),
    streamed: boolOf(row.streamed),
  };
}

export async function insertLog(db: SqlExecutor, row: LogRow): Promise<void> {
  const params: SqlParam[] = [
    row.id,
    row.at,
    row.requestId,
    row.keyId,
    row.workspaceId,
    row.memberId,
    row.endUser,
    row.clientAddress,
    row.method,
    row.route,
    row.requestedModel,
    row.servedModel,
    row.peerId,
    row.provider,
    row.serviceId,
    row.status,
    row.errorCode,
    row.inputTokens,
    row.cachedInputTokens,
    row.outputTokens,
    row.costMicro,
    row.latencyMs,
    row.ttfbMs,
    row.streamed ? 1 : 0,
  ];
  await db.run(INSERT, params);
}

function where(filter: LogFilter): { sql: string; params: SqlParam[] } {
  return {
    sql: `WHERE ($1 = '' OR key_id = $1) AND ($2 = '' OR workspace_id = $2) AND at >= $3
      AND at < $4 AND ($5 = '' OR member_id = $5)
      AND ($6 = '' OR served_model = $6 OR requested_model = $6) AND ($7 = '' OR peer_id = $7)
      AND ($8 = '' OR end_user = $8)`,
    params: [
      filter.keyId ?? '',
      filter.workspaceId ?? '',
      filter.since ?? 0,
      filter.until ?? Number.MAX_SAFE_INTEGER,
      filter.memberId ?? '',
      filter.model ?? '',
      filter.seller ?? '',
      filter.endUser ?? '',
    ],
  };
}

export async function queryLogs(db: SqlExecutor, filter: LogFilter): Promise<LogRow[]> {
  const { sql, params } = where(filter);
  const rows = await db.query(
    `SELECT * FROM request_log ${sql} ORDER BY at DESC, id DESC LIMIT $9`,
    [...params, filter.limit ?? 1000],
  );
  return rows.map(logOf);
}

const GROUP_COLUMN: Record<UsageDimension, string> = {
  key: 'key_id',
  member: 'member_id',
  model: 'served_model',
  seller: 'peer_id',
  end_user: 'end_user',
};

/** A request to a model: not one of the key's own free routes (`/v1/key`, `/v1/models`). */
const MODEL_REQUEST = "route NOT LIKE '/v1/key%' AND route NOT LIKE '/v1/models%'";

/**
 * A request nothing served: refused or failed before any seller answered (the gateway's budget,
 * policy or body checks, the buyer's routing), so no seller, no cost. Usage leaves these out, as
 * they have no model, seller or spend to count; they are counted apart (`unservedRequests`).
 */
const NOT_SERVED = 'status >= 400 AND peer_id IS NULL AND cost = 0';

export async function usageSummary(
  db: SqlExecutor,
  by: UsageDimension,
  filter: LogFilter,
): Promise<UsageSummaryRow[]> {
  const { sql, params } = where(filter);
  const column = GROUP_COLUMN[by];
  const rows = await db.query(
    `SELECT ${column} AS grp, COUNT(*) AS requests, COALESCE(SUM(input_tokens), 0) AS input,
       COALESCE(SUM(cached_input_tokens), 0) AS cached, COALESCE(SUM(output_tokens), 0) AS output,
       COALESCE(SUM(cost), 0) AS cost
     FROM request_log ${sql} AND key_id IS NOT NULL AND ${MODEL_REQUEST} AND NOT (${NOT_SERVED})
     GROUP BY ${column} ORDER BY cost DESC, grp`,
    params,
  );
  return rows.map((row) => ({
    group: textOrNull(row.grp),
    requests: numberOf(row.requests),
    inputTokens: numberOf(row.input),
    cachedInputTokens: numberOf(row.cached),
    outputTokens: numberOf(row.output),
    costMicro: bigintOf(row.cost),
  }));
}

/** Requests of keys under `filter` that nothing served (left out of `usageSummary`). */
export async function unservedRequests(db: SqlExecutor, filter: LogFilter): Promise<number> {
  const { sql, params } = where(filter);
  const rows = await db.query(
    `SELECT COUNT(*) AS requests FROM request_log ${sql}
     AND key_id IS NOT NULL AND ${MODEL_REQUEST} AND ${NOT_SERVED}`,
    params,
  );
  return numberOf(rows[0]?.requests);
}

export async function pruneLogs(db: SqlExecutor, before: number): Promise<number> {
  return db.run('DELETE FROM request_log WHERE at < $1', [before]);
}
