/**
 * Web console rows (docs/decisions/135-console-sign-in.md): sessions, one-time sign-in links and
 * the audit log of admin mutations. Session ids and link tokens are stored as hashes only.
 */
import { bigintOf, numberOf, type SqlDb, type SqlRow, textOf, textOrNull } from './SqlDb.js';

/** Migration statements creating the console tables (schema version 3). */
export const CONSOLE_MIGRATION = [
  `CREATE TABLE console_sessions (id_hash TEXT PRIMARY KEY, kind TEXT NOT NULL,
    subject_id TEXT NOT NULL, csrf_token TEXT NOT NULL, created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL)`,
  'CREATE INDEX console_sessions_expiry ON console_sessions (expires_at)',
  `CREATE TABLE console_login_links (token_hash TEXT PRIMARY KEY, subject_id TEXT NOT NULL,
    created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)`,
  `CREATE TABLE console_audit (id TEXT PRIMARY KEY, at BIGINT NOT NULL, actor TEXT NOT NULL,
    action TEXT NOT NULL, target TEXT NOT NULL, detail TEXT NOT NULL)`,
  'CREATE INDEX console_audit_at ON console_audit (at)',
];

/** Who a session speaks for: a key (read-only), a member, or the gateway host's operator. */
export type ConsoleSessionKind = 'key' | 'member' | 'operator';

export interface ConsoleSession {
  idHash: string;
  kind: ConsoleSessionKind;
  /** Key id, member id, or '' for the operator. */
  subjectId: string;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export interface AuditEntry {
  id: string;
  at: number;
  /** "operator", "member:<name>". */
  actor: string;
  action: string;
  target: string;
  /** JSON text of the changed fields (never a secret). */
  detail: string;
}

export interface DailySpend {
  /** UTC day as unix ms of its midnight. */
  day: number;
  requests: number;
  costMicro: bigint;
}

export interface KeyTopup {
  at: number;
  amountMicro: bigint;
  state: string;
  transaction: string | null;
}

/** The console's rows in the gateway store (same database, so every gateway sees them). */
export interface ConsoleTables {
  createSession(session: ConsoleSession): Promise<void>;
  getSession(idHash: string, now: number): Promise<ConsoleSession | null>;
  deleteSession(idHash: string): Promise<void>;
  /** Deletes every session of a subject (a revoked key, a disabled member). */
  deleteSessionsOf(kind: ConsoleSessionKind, subjectId: string): Promise<void>;
  pruneExpired(now: number): Promise<void>;
  createLoginLink(link: {
    tokenHash: string;
    subjectId: string;
    createdAt: number;
    expiresAt: number;
  }): Promise<void>;
  /** Uses a link once: its subject id, or null when unknown, used or expired. */
  consumeLoginLink(tokenHash: string, now: number): Promise<string | null>;
  insertAudit(entry: AuditEntry): Promise<void>;
  listAudit(limit: number): Promise<AuditEntry[]>;
  /** A key's x402 top-ups, newest first. */
  listTopups(keyId: string, limit: number): Promise<KeyTopup[]>;
  /** Console-only key edits the CLI has no command for (label, expiry, models). */
  setKeyDetails(
    id: string,
    change: { label?: string; expiresAt?: number | null; allowedModels?: string[] | null },
  ): Promise<void>;
  /** Spend per UTC day from the request log since `since`, optionally of one key or workspace. */
  dailySpend(filter: {
    keyId?: string;
    workspaceId?: string;
    since: number;
  }): Promise<DailySpend[]>;
}

const DAY_MS = 86_400_000;

function sessionOf(row: SqlRow): ConsoleSession {
  return {
    idHash: textOf(row.id_hash),
    kind: textOf(row.kind) as ConsoleSessionKind,
    subjectId: textOf(row.subject_id),
    csrfToken: textOf(row.csrf_token),
    createdAt: numberOf(row.created_at),
    expiresAt: numberOf(row.expires_at),
  };
}

export class SqlConsoleTables implements ConsoleTables {
  private readonly db: SqlDb;

  constructor(db: SqlDb) {
    this.db = db;
  }

  async createSession(s: ConsoleSession): Promise<void> {
    await this.db.run(
      `INSERT INTO console_sessions (id_hash, kind, subject_id, csrf_token, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [s.idHash, s.kind, s.subjectId, s.csrfToken, s.createdAt, s.expiresAt],
    );
  }

  async getSession(idHash: string, now: number): Promise<ConsoleSession | null> {
    const rows = await this.db.query(
      'SELECT * FROM console_sessions WHERE id_hash = $1 AND expires_at > $2',
      [idHash, now],
    );
    return rows[0] ? sessionOf(rows[0]) : null;
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.db.run('DELETE FROM console_sessions WHERE id_hash = $1', [idHash]);
  }

  async deleteSessionsOf(kind: ConsoleSessionKind, subjectId: string): Promise<void> {
    await this.db.run('DELETE FROM console_sessions WHERE kind = $1 AND subject_id = $2', [
      kind,
      subjectId,
    ]);
  }

  async pruneExpired(now: number): Promise<void> {
    await this.db.run('DELETE FROM console_sessions WHERE expires_at <= $1', [now]);
    await this.db.run('DELETE FROM console_login_links WHERE expires_at <= $1', [now]);
  }

  async createLoginLink(link: {
    tokenHash: string;
    subjectId: string;
    createdAt: number;
    expiresAt: number;
  }): Promise<void> {
    await this.db.run(
      `INSERT INTO console_login_links (token_hash, subject_id, created_at, expires_at)
       VALUES ($1, $2, $3, $4)`,
      [link.tokenHash, link.subjectId, link.createdAt, link.expiresAt],
    );
  }

  consumeLoginLink(tokenHash: string, now: number): Promise<string | null> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.query(
        `SELECT subject_id, expires_at FROM console_login_links WHERE token_hash = $1${tx.forUpdate}`,
        [tokenHash],
      );
      const row = rows[0];
      if (!row) return null;
      // Deleted whether or not it expired: a link is tried once.
      await tx.run('DELETE FROM console_login_links WHERE token_hash = $1', [tokenHash]);
      return numberOf(row.expires_at) > now ? textOf(row.subject_id) : null;
    });
  }

  async insertAudit(e: AuditEntry): Promise<void> {
    await this.db.run(
      `INSERT INTO console_audit (id, at, actor, action, target, detail)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [e.id, e.at, e.actor, e.action, e.target, e.detail],
    );
  }

  async listAudit(limit: number): Promise<AuditEntry[]> {
    const rows = await this.db.query(
      'SELECT * FROM console_audit ORDER BY at DESC, id DESC LIMIT $1',
      [limit],
    );
    return rows.map((row) => ({
      id: textOf(row.id),
      at: numberOf(row.at),
      actor: textOf(row.actor),
      action: textOf(row.action),
      target: textOf(row.target),
      detail: textOrNull(row.detail) ?? '{}',
    }));
  }

  async listTopups(keyId: string, limit: number): Promise<KeyTopup[]> {
    const rows = await this.db.query(
      'SELECT created_at, amount, state, tx FROM topups WHERE key_id = $1 ORDER BY created_at DESC LIMIT $2',
      [keyId, limit],
    );
    return rows.map((row) => ({
      at: numberOf(row.created_at),
      amountMicro: bigintOf(row.amount),
      state: textOf(row.state),
      transaction: textOrNull(row.tx),
    }));
  }

  async setKeyDetails(
    id: string,
    change: { label?: string; expiresAt?: number | null; allowedModels?: string[] | null },
  ): Promise<void> {
    if (change.label !== undefined) {
      await this.db.run('UPDATE api_keys SET label = $2 WHERE id = $1', [id, change.label]);
    }
    if (change.expiresAt !== undefined) {
      await this.db.run('UPDATE api_keys SET expires_at = $2 WHERE id = $1', [
        id,
        change.expiresAt,
      ]);
    }
    if (change.allowedModels !== undefined) {
      const models = change.allowedModels === null ? null : JSON.stringify(change.allowedModels);
      await this.db.run('UPDATE api_keys SET allowed_models = $2 WHERE id = $1', [id, models]);
    }
  }

  async dailySpend(filter: {
    keyId?: string;
    workspaceId?: string;
    since: number;
  }): Promise<DailySpend[]> {
    const rows = await this.db.query(
      `SELECT (at / ${DAY_MS}) AS day, COUNT(*) AS requests, COALESCE(SUM(cost), 0) AS cost
       FROM request_log
       WHERE key_id IS NOT NULL AND ($1 = '' OR key_id = $1) AND ($2 = '' OR workspace_id = $2)
         AND at >= $3
       GROUP BY (at / ${DAY_MS}) ORDER BY day`,
      [filter.keyId ?? '', filter.workspaceId ?? '', filter.since],
    );
    return rows.map((row) => ({
      day: Math.floor(numberOf(row.day)) * DAY_MS,
      requests: numberOf(row.requests),
      costMicro: bigintOf(row.cost),
    }));
  }
}
