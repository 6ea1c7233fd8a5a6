/**
 * The request path's one read: a key by its secret hash, with its member and workspace joined
 * (instead of three lookups). Read on every request, never cached, so a revoke, rotate, limit or
 * policy change made by another process applies to the very next request.
 */
import type { CallerRecord, MemberCore, OrgRole, WorkspaceRecord } from '../types.js';
import { keyOf } from './keys.js';
import { boolOf, limitsOf, numberOrNull, policyOf } from './rows.js';
import { numberOf, type SqlExecutor, type SqlRow, textOf } from './SqlDb.js';

const LIMITS = ['daily', 'weekly', 'monthly', 'total'].map((p) => `${p}_limit`);
const MEMBER = [
  'id',
  'name',
  'org_role',
  'key_quota',
  'disabled',
  'policy',
  'created_at',
  ...LIMITS,
];
const WORKSPACE = ['id', 'name', 'identity', 'policy', 'created_at', ...LIMITS];
const prefixed = (alias: string, columns: string[]) =>
  columns.map((column) => `${alias}.${column} AS ${alias}_${column}`).join(', ');

const SQL = `SELECT k.*, ${prefixed('m', MEMBER)}, ${prefixed('w', WORKSPACE)}
  FROM api_keys k LEFT JOIN members m ON m.id = k.member_id
  LEFT JOIN workspaces w ON w.id = k.workspace_id WHERE k.secret_hash = $1`;

function memberOf(row: SqlRow): MemberCore | null {
  if (row.m_id === null || row.m_id === undefined) return null;
  return {
    id: textOf(row.m_id),
    name: textOf(row.m_name),
    orgRole: textOf(row.m_org_role) as OrgRole,
    keyQuota: numberOrNull(row.m_key_quota),
    disabled: boolOf(row.m_disabled),
    limits: limitsOf(row, 'm_'),
    policy: policyOf(row.m_policy),
    createdAt: numberOf(row.m_created_at),
  };
}

function workspaceOf(row: SqlRow): WorkspaceRecord | null {
  if (row.w_id === null || row.w_id === undefined) return null;
  return {
    id: textOf(row.w_id),
    name: textOf(row.w_name),
    identity: textOf(row.w_identity),
    limits: limitsOf(row, 'w_'),
    policy: policyOf(row.w_policy),
    createdAt: numberOf(row.w_created_at),
  };
}

export async function findCaller(
  db: SqlExecutor,
  secretHash: string,
): Promise<CallerRecord | null> {
  const row = (await db.query(SQL, [secretHash]))[0];
  return row ? { key: keyOf(row), member: memberOf(row), workspace: workspaceOf(row) } : null;
}
