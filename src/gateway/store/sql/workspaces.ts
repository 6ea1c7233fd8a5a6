/** Workspace rows: each pays from exactly one identity. */
import type { RoutingPolicy } from '../../policy/types.js';
import type { Limits, WorkspaceRecord } from '../types.js';
import { limitAssignments, limitsOf, policyOf, policyText } from './rows.js';
import { numberOf, type SqlExecutor, type SqlRow, textOf } from './SqlDb.js';

function workspaceOf(row: SqlRow): WorkspaceRecord {
  return {
    id: textOf(row.id),
    name: textOf(row.name),
    identity: textOf(row.identity),
    limits: limitsOf(row),
    policy: policyOf(row.policy),
    createdAt: numberOf(row.created_at),
  };
}

export async function createWorkspace(
  db: SqlExecutor,
  input: { id: string; name: string; identity: string; createdAt: number },
): Promise<WorkspaceRecord> {
  await db.run('INSERT INTO workspaces (id, name, identity, created_at) VALUES ($1, $2, $3, $4)', [
    input.id,
    input.name,
    input.identity,
    input.createdAt,
  ]);
  return (await findWorkspace(db, 'id', input.id))!;
}

export async function findWorkspace(
  db: SqlExecutor,
  column: 'id' | 'name' | 'identity',
  value: string,
): Promise<WorkspaceRecord | null> {
  const rows = await db.query(`SELECT * FROM workspaces WHERE ${column} = $1`, [value]);
  return rows[0] ? workspaceOf(rows[0]) : null;
}

export async function listWorkspaces(db: SqlExecutor): Promise<WorkspaceRecord[]> {
  return (await db.query('SELECT * FROM workspaces ORDER BY created_at, name')).map(workspaceOf);
}

export async function setWorkspaceLimits(
  db: SqlExecutor,
  id: string,
  limits: Partial<Limits>,
): Promise<void> {
  const { sql, params } = limitAssignments(limits, '', 2);
  if (sql) await db.run(`UPDATE workspaces SET ${sql} WHERE id = $1`, [id, ...params]);
}

export async function setWorkspacePolicy(
  db: SqlExecutor,
  id: string,
  policy: RoutingPolicy | null,
): Promise<void> {
  await db.run('UPDATE workspaces SET policy = $2 WHERE id = $1', [id, policyText(policy)]);
}
