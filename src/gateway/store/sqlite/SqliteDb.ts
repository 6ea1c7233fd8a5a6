/**
 * SqlDb over `node:sqlite` (synchronous, one connection, WAL). Transactions use
 * `BEGIN IMMEDIATE` so the write lock is taken before the first read — no read-then-write race,
 * also against other processes (the CLI) sharing the file. One in-process mutex serialises
 * transactions because they share the connection.
 */
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type { SqlDb, SqlExecutor, SqlParam, SqlRow } from '../sql/SqlDb.js';
import { type Checkpointer, startCheckpointer } from './checkpointer.js';

function bind(params: readonly SqlParam[]): SQLInputValue[] {
  for (const value of params) {
    if (typeof value === 'boolean') {
      return params.map((param) => (typeof param === 'boolean' ? (param ? 1 : 0) : param));
    }
  }
  return params as SQLInputValue[];
}

/** `$1` -> `?1` (node:sqlite numbers anonymous parameters this way). */
function toSqlite(sql: string): string {
  return sql.replace(/\$(\d+)/g, '?$1');
}

export interface SqliteOptions {
  /**
   * Checkpoint the WAL from a worker thread every this many ms instead of inside commits
   * (long-running gateways; decision 099). Off by default: short CLI commands need no thread.
   */
  backgroundCheckpointMs?: number;
}

/** WAL pages after which a commit checkpoints itself anyway (SQLite's default is 1000). */
const BACKSTOP_PAGES = 10_000;

class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.tail;
    this.tail = previous.then(() => next);
    await previous;
    return release;
  }
}

/** Opens (creating when missing) the SQLite database at `path`; `:memory:` for tests. */
export class SqliteDb implements SqlDb {
  readonly dialect = 'sqlite' as const;
  readonly forUpdate = '';
  private readonly db: DatabaseSync;
  private readonly mutex = new Mutex();
  private readonly statements = new Map<string, ReturnType<DatabaseSync['prepare']>>();

  private readonly checkpointer: Checkpointer | null;
  /** The inside of a transaction (one at a time: the mutex serialises them). */
  private readonly tx: SqlExecutor = {
    forUpdate: '',
    query: async (sql, params = []) => this.queryNow(sql, params),
    run: async (sql, params = []) => this.runNow(sql, params),
  };

  constructor(path: string, busyTimeoutMs = 5000, options: SqliteOptions = {}) {
    this.db = new DatabaseSync(path, { timeout: busyTimeoutMs });
    this.db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;',
    );
    const background = options.backgroundCheckpointMs;
    if (background && path !== ':memory:') {
      // The worker checkpoints; this connection only does when the WAL outgrows the backstop.
      this.db.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`);
      this.checkpointer = startCheckpointer(path, background);
    } else {
      this.checkpointer = null;
    }
  }

  private prepared(sql: string) {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(toSqlite(sql));
      statement.setReadBigInts(true);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private queryNow(sql: string, params: readonly SqlParam[]): SqlRow[] {
    return this.prepared(sql).all(...bind(params)) as SqlRow[];
  }

  private runNow(sql: string, params: readonly SqlParam[]): number {
    return Number(this.prepared(sql).run(...bind(params)).changes);
  }

  /** Reads run at once: a synchronous statement cannot interleave with anything. */
  async query(sql: string, params: readonly SqlParam[] = []): Promise<SqlRow[]> {
    return this.queryNow(sql, params);
  }

  async run(sql: string, params: readonly SqlParam[] = []): Promise<number> {
    const release = await this.mutex.lock();
    try {
      return this.runNow(sql, params);
    } finally {
      release();
    }
  }

  async transaction<T>(body: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const release = await this.mutex.lock();
    try {
      this.prepared('BEGIN IMMEDIATE').run();
      try {
        const result = await body(this.tx);
        this.prepared('COMMIT').run();
        return result;
      } catch (error) {
        if (this.db.isTransaction) this.db.exec('ROLLBACK');
        throw error;
      }
    } finally {
      release();
    }
  }

  async exec(script: string): Promise<void> {
    const release = await this.mutex.lock();
    try {
      this.db.exec(script);
    } finally {
      release();
    }
  }

  async close(): Promise<void> {
    await this.checkpointer?.stop();
    const release = await this.mutex.lock();
    try {
      if (this.db.isOpen) this.db.close();
    } finally {
      release();
    }
  }
}
