/**
 * Versioned schema migrations, written once in the SQL both SQLite and PostgreSQL accept.
 * Money columns are BIGINT micro-USD; times are BIGINT unix milliseconds; JSON is TEXT.
 * Append new versions; never edit an applied one.
 */

import { CONSOLE_MIGRATION } from './sql/console.js';
import type { SqlDb } from './sql/SqlDb.js';
import { TOPUP_MIGRATION } from './sql/topups.js';

const LIMIT_COLUMNS = (prefix: string) =>
  ['daily', 'weekly', 'monthly', 'total']
    .map((period) => `${prefix}${period}_limit BIGINT`)
    .join(', ');

/**
 * SQLite stores tables keyed by their primary key directly (no rowid B-tree beside the index):
 * half the pages written per budget transaction. PostgreSQL has no such clause.
 */
type Dialect = SqlDb['dialect'];
const clustered = (dialect: Dialect) => (dialect === 'sqlite' ? ' WITHOUT ROWID' : '');

/** Migration `version` -> its statements for a dialect. */
export const MIGRATIONS: ReadonlyArray<{
  version: number;
  statements: (dialect: Dialect) => string[];
}> = [
  {
    version: 1,
    statements: (dialect) => [
      `CREATE TABLE workspaces (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
        identity TEXT NOT NULL UNIQUE, ${LIMIT_COLUMNS('')}, policy TEXT,
        created_at BIGINT NOT NULL)`,
      `CREATE TABLE members (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
        org_role TEXT NOT NULL DEFAULT 'none', key_quota INTEGER,
        disabled INTEGER NOT NULL DEFAULT 0, ${LIMIT_COLUMNS('')}, policy TEXT,
        created_at BIGINT NOT NULL)`,
      `CREATE TABLE memberships (member_id TEXT NOT NULL REFERENCES members(id),
        workspace_id TEXT NOT NULL REFERENCES workspaces(id), role TEXT NOT NULL,
        PRIMARY KEY (member_id, workspace_id))`,
      `CREATE TABLE api_keys (id TEXT PRIMARY KEY, label TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE, workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        member_id TEXT REFERENCES members(id), identity TEXT NOT NULL,
        own_identity INTEGER NOT NULL DEFAULT 0, allowed_models TEXT,
        topup_enabled INTEGER NOT NULL DEFAULT 0, created_at BIGINT NOT NULL, expires_at BIGINT,
        revoked_at BIGINT, ${LIMIT_COLUMNS('admin_')}, ${LIMIT_COLUMNS('owner_')}, policy TEXT,
        topped_up BIGINT NOT NULL DEFAULT 0)`,
      'CREATE INDEX api_keys_member ON api_keys (member_id)',
      `CREATE TABLE presets (name TEXT NOT NULL, owner TEXT NOT NULL, policy TEXT NOT NULL,
        created_at BIGINT NOT NULL, PRIMARY KEY (name, owner))`,
      `CREATE TABLE budget_usage (scope TEXT NOT NULL, scope_id TEXT NOT NULL,
        period TEXT NOT NULL, period_start BIGINT NOT NULL, spent BIGINT NOT NULL DEFAULT 0,
        reserved BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (scope, scope_id, period, period_start))${clustered(dialect)}`,
      `CREATE TABLE reservations (id TEXT PRIMARY KEY, key_id TEXT NOT NULL,
        amount BIGINT NOT NULL, entries TEXT NOT NULL, created_at BIGINT NOT NULL)${clustered(dialect)}`,
      `CREATE TABLE ledger (request_id TEXT NOT NULL, key_id TEXT NOT NULL, member_id TEXT,
        workspace_id TEXT NOT NULL, cost BIGINT NOT NULL, input_tokens BIGINT NOT NULL,
        cached_input_tokens BIGINT NOT NULL, output_tokens BIGINT NOT NULL, at BIGINT NOT NULL)`,
      'CREATE INDEX ledger_key ON ledger (key_id)',
      `CREATE TABLE request_log (id TEXT PRIMARY KEY, at BIGINT NOT NULL, request_id TEXT,
        key_id TEXT, workspace_id TEXT, member_id TEXT, end_user TEXT, client_address TEXT,
        method TEXT NOT NULL, route TEXT NOT NULL, requested_model TEXT, served_model TEXT,
        peer_id TEXT, provider TEXT, service_id TEXT, status INTEGER NOT NULL, error_code TEXT,
        input_tokens BIGINT NOT NULL DEFAULT 0, cached_input_tokens BIGINT NOT NULL DEFAULT 0,
        output_tokens BIGINT NOT NULL DEFAULT 0, cost BIGINT NOT NULL DEFAULT 0,
        latency_ms INTEGER, ttfb_ms INTEGER, streamed INTEGER NOT NULL DEFAULT 0)`,
      'CREATE INDEX request_log_at ON request_log (at)',
      'CREATE INDEX request_log_key ON request_log (key_id, at)',
    ],
  },
  { version: 2, statements: () => TOPUP_MIGRATION },
  { version: 3, statements: () => CONSOLE_MIGRATION },
  // A reservation of a key with no limit anywhere is not a cap: the buyer was not told to stop
  // there, so settling charges what it paid (rows written before this version were capped).
  {
    version: 4,
    statements: () => ['ALTER TABLE reservations ADD COLUMN limited INTEGER NOT NULL DEFAULT 1'],
  },
];

/** Brings the schema up to the newest version; safe when several gateways start at once. */
export async function migrate(db: SqlDb, now: number): Promise<number> {
  await db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
  );
  return db.transaction(async (tx) => {
    // Serialises concurrent starts: SQLite holds the write lock already (BEGIN IMMEDIATE).
    if (db.dialect === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(8379)');
    const rows = await tx.query('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => Number(row.version)));
    let latest = Math.max(0, ...applied);
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      for (const statement of migration.statements(db.dialect)) await tx.run(statement);
      await tx.run('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
        migration.version,
        now,
      ]);
      latest = migration.version;
    }
    return latest;
  });
}
