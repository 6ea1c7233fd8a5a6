/** Member rows, their workspace memberships and roles. */
import type { RoutingPolicy } from '../../policy/types.js';
import type { Limits, MemberRecord, OrgRole, WorkspaceRole } from '../types.js';
import { boolOf, limitAssignments, limitsOf, numberOrNull, policyOf, policyText } from './rows.js';
import { numberOf, type SqlExecutor, type SqlRow, textOf } from './SqlDb.js';

async function memberOf(db: SqlExecutor, row: SqlRow): Promise<MemberRecord> {
  const memberships = await db.query(
    'SELECT workspace_id, role FROM memberships WHERE member_id = $1 ORDER BY workspace_id',
    [textOf(row.id)],
  );
  return {
    id: textOf(row.id),
    name: textOf(row.name),
    orgRole: textOf(row.org_role) as OrgRole,
    keyQuota: numberOrNull(row.key_quota),
    disabled: boolOf(row.disabled),
    limits: limitsOf(row),
    policy: policyOf(row.policy),
    createdAt: numberOf(row.created_at),
    workspaces: memberships.map((m) => ({
      workspaceId: textOf(m.workspace_id),
      role: textOf(m.role) as WorkspaceRole,
    })),
  };
}

export async function createMember(
  db: SqlExecutor,
  input: { id: string; name: string; orgRole: OrgRole; keyQuota: number | null; createdAt: number },
): Promise<MemberRecord> {
  await db.run(
    'INSERT INTO members (id, name, org_role, key_quota, created_at) VALUES ($1, $2, $3, $4, $5)',
    [input.id, input.name, input.orgRole, input.keyQuota, input.createdAt],
  );
  return (await findMember(db, 'id', input.id))!;
}

export async function addMembership(
  db: SqlExecutor,
  memberId: string,
  workspaceId: string,
  role: WorkspaceRole,
): Promise<void> {
  await db.run(
    `INSERT INTO memberships (member_id, workspace_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (member_id, workspace_id) DO UPDATE SET role = excluded.role`,
    [memberId, workspaceId, role],
  );
}

export async function findMember(
  db: SqlExecutor,
  column: 'id' | 'name',
  value: string,
): Promise<MemberRecord | null> {
  const rows = await db.query(`SELECT * FROM members WHERE ${column} = $1`, [value]);
  return rows[0] ? memberOf(db, rows[0]) : null;
}

export async function listMembers(db: SqlExecutor): Promise<MemberRecord[]> {
  const rows = await db.query('SELECT * FROM members ORDER BY created_at, name');
  return Promise.all(rows.map((row) => memberOf(db, row)));
}

export async function updateMember(
  db: SqlExecutor,
  id: string,
  change:
    | { disabled: boolean }
    | { keyQuota: number | null }
    | { policy: RoutingPolicy | null }
    | { limits: Partial<Limits> },
): Promise<void> {
  if ('disabled' in change) {
    await db.run('UPDATE members SET disabled = $2 WHERE id = $1', [id, change.disabled ? 1 : 0]);
  } else if ('keyQuota' in change) {
    await db.run('UPDATE members SET key_quota = $2 WHERE id = $1', [id, change.keyQuota]);
  } else if ('policy' in change) {
    await db.run('UPDATE members SET policy = $2 WHERE id = $1', [id, policyText(change.policy)]);
  } else {
    const { sql, params } = limitAssignments(change.limits, '', 2);
    if (sql) await db.run(`UPDATE members SET ${sql} WHERE id = $1`, [id, ...params]);
  }
}
