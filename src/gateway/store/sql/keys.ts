/** API key rows. Only the SHA-256 of a secret is stored. */
import type { RoutingPolicy } from '../../policy/types.js';
import type { KeyRecord, Limits, NewKey } from '../types.js';
import { boolOf, limitAssignments, limitsOf, numberOrNull, policyOf, policyText } from './rows.js';
import { bigintOf, numberOf, type SqlExecutor, type SqlRow, textOf, textOrNull } from './SqlDb.js';

export function keyOf(row: SqlRow): KeyRecord {
  const models = textOrNull(row.allowed_models);
  return {
    id: textOf(row.id),
    label: textOf(row.label),
    secretHash: textOf(row.secret_hash),
    workspaceId: textOf(row.workspace_id),
    memberId: textOrNull(row.member_id),
    identity: textOf(row.identity),
    ownIdentity: boolOf(row.own_identity),
    allowedModels: models ? (JSON.parse(models) as string[]) : null,
    topupEnabled: boolOf(row.topup_enabled),
    createdAt: numberOf(row.created_at),
    expiresAt: numberOrNull(row.expires_at),
    revokedAt: numberOrNull(row.revoked_at),
    adminLimits: limitsOf(row, 'admin_'),
    ownerLimits: limitsOf(row, 'owner_'),
    policy: policyOf(row.policy),
    toppedUpMicro: bigintOf(row.topped_up),
  };
}

export async function createKey(db: SqlExecutor, key: NewKey): Promise<KeyRecord> {
  await db.run(
    `INSERT INTO api_keys (id, label, secret_hash, workspace_id, member_id, identity, own_identity,
       allowed_models, topup_enabled, created_at, expires_at,
       admin_daily_limit, admin_weekly_limit, admin_monthly_limit, admin_total_limit)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
    [
      key.id,
      key.label,
      key.secretHash,
      key.workspaceId,
      key.memberId,
      key.identity,
      key.ownIdentity ? 1 : 0,
      key.allowedModels ? JSON.stringify(key.allowedModels) : null,
      key.topupEnabled ? 1 : 0,
      key.createdAt,
      key.expiresAt,
      key.adminLimits.daily,
      key.adminLimits.weekly,
      key.adminLimits.monthly,
      key.adminLimits.total,
    ],
  );
  return (await findKey(db, 'id', key.id))!;
}

export async function findKey(
  db: SqlExecutor,
  column: 'id' | 'secret_hash',
  value: string,
): Promise<KeyRecord | null> {
  const rows = await db.query(`SELECT * FROM api_keys WHERE ${column} = $1`, [value]);
  return rows[0] ? keyOf(rows[0]) : null;
}

export async function listKeys(
  db: SqlExecutor,
  filter: { workspaceId?: string; memberId?: string } = {},
): Promise<KeyRecord[]> {
  const rows = await db.query(
    `SELECT * FROM api_keys WHERE ($1 = '' OR workspace_id = $1) AND ($2 = '' OR member_id = $2)
     ORDER BY created_at, id`,
    [filter.workspaceId ?? '', filter.memberId ?? ''],
  );
  return rows.map(keyOf);
}

export async function countKeysOfMember(db: SqlExecutor, memberId: string): Promise<number> {
  const rows = await db.query(
    'SELECT COUNT(*) AS n FROM api_keys WHERE member_id = $1 AND revoked_at IS NULL',
    [memberId],
  );
  return numberOf(rows[0]?.n);
}

export async function revokeKey(db: SqlExecutor, id: string, at: number): Promise<boolean> {
  return (
    (await db.run('UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
      id,
      at,
    ])) > 0
  );
}

export async function rotateKey(db: SqlExecutor, id: string, secretHash: string): Promise<boolean> {
  return (
    (await db.run('UPDATE api_keys SET secret_hash = $2 WHERE id = $1 AND revoked_at IS NULL', [
      id,
      secretHash,
    ])) > 0
  );
}

export async function setKeyLimits(
  db: SqlExecutor,
  id: string,
  who: 'admin' | 'owner',
  limits: Partial<Limits>,
): Promise<void> {
  const { sql, params } = limitAssignments(limits, `${who}_`, 2);
  if (sql) await db.run(`UPDATE api_keys SET ${sql} WHERE id = $1`, [id, ...params]);
}

export async function setKeyFlag(
  db: SqlExecutor,
  id: string,
  change: { topupEnabled: boolean } | { policy: RoutingPolicy | null },
): Promise<void> {
  if ('topupEnabled' in change) {
    await db.run('UPDATE api_keys SET topup_enabled = $2 WHERE id = $1', [
      id,
      change.topupEnabled ? 1 : 0,
    ]);
  } else {
    await db.run('UPDATE api_keys SET policy = $2 WHERE id = $1', [id, policyText(change.policy)]);
  }
}

export async function addKeyTopUp(db: SqlExecutor, id: string, amountMicro: bigint): Promise<void> {
  await db.run('UPDATE api_keys SET topped_up = topped_up + $2 WHERE id = $1', [id, amountMicro]);
}
