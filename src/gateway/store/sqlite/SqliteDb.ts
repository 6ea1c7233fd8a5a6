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
  /** `changeEpoch`: tables watched for this connection's writes, and what it last saw. */
  private readonly watched = new Set<string>();
  private dataVersion: ReturnType<DatabaseSync['prepare']> | null = null;
  private lastDataVersion: unknown = null;
  private epoch = 0;
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

  /**
   * A number that changes whenever a row of `tables` may have changed since the previous call:
   * another connection committed (`PRAGMA data_version`, which counts their commits, checkpoints
   * too), or this connection wrote to one of the tables (temporary triggers, which only this
   * connection has, call back into JS) or rolled a transaction back. Callers cache what they
   * read from those tables under the epoch they read it in.
   */
  changeEpoch(tables: readonly string[]): number {
    for (const table of tables) if (!this.watched.has(table)) this.watch(table);
    this.dataVersion ??= this.db.prepare('PRAGMA data_version');
    const version = (this.dataVersion.get() as { data_version: unknown }).data_version;
    if (version !== this.lastDataVersion) {
      this.lastDataVersion = version;
      this.epoch += 1;
    }
    return this.epoch;
  }

  private watch(table: string): void {
    if (!/^[a-z_]+$/.test(table)) throw new Error(`cannot watch table ${table}`);
    if (this.watched.size === 0) {
      this.db.function('svc_watched_write', () => {
        this.epoch += 1;
        return null;
      });
    }
    for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
      this.db.exec(
        `CREATE TEMP TRIGGER IF NOT EXISTS svc_watch_${table}_${event.toLowerCase()}
         AFTER ${event} ON main.${table} BEGIN SELECT svc_watched_write(); END`,
      );
    }
    this.watched.add(table);
    this.epoch += 1;
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
        // Rows read inside it (and cached) may be gone, and so may triggers created inside it.
        this.epoch += 1;
        this.watched.clear();
        throw error;
      }
    } finally {
      release();
    }
  }

  async exec(script: string): Promise<void> {
    const release = await this.mutex.lock();
    try {
      this.epoch += 1;
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
