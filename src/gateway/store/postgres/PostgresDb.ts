/**
 * SqlDb over `pg`. Transactions are READ COMMITTED with `SELECT ... FOR UPDATE` on the budget
 * rows they change, taken in one fixed order, so concurrent reservations from any number of
 * gateways serialise per row without deadlocks.
 */
import pg from 'pg';
import type { SqlDb, SqlExecutor, SqlParam, SqlRow } from '../sql/SqlDb.js';

function bind(params: readonly SqlParam[]): unknown[] {
  return params.map((value) => (typeof value === 'bigint' ? value.toString() : value));
}

/** Connects a pool to `databaseUrl`. */
export class PostgresDb implements SqlDb {
  readonly dialect = 'postgres' as const;
  readonly forUpdate = ' FOR UPDATE';
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string, maxConnections = 20) {
    this.pool = new pg.Pool({
      connectionString: databaseUrl,
      max: maxConnections,
      connectionTimeoutMillis: 10_000,
    });
    // An idle client losing its server (restart) must not crash the process.
    this.pool.on('error', () => {});
  }

  async query(sql: string, params: readonly SqlParam[] = []): Promise<SqlRow[]> {
    return (await this.pool.query(sql, bind(params))).rows as SqlRow[];
  }

  async run(sql: string, params: readonly SqlParam[] = []): Promise<number> {
    return (await this.pool.query(sql, bind(params))).rowCount ?? 0;
  }

  async transaction<T>(body: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    // The server going away mid-transaction (restart) is emitted on the checked-out client as
    // well as failing its query: without a listener that event would crash the process.
    const onError = () => {
      broken = true;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const tx: SqlExecutor = {
        forUpdate: this.forUpdate,
        query: async (sql, params = []) => (await client.query(sql, bind(params))).rows as SqlRow[],
        run: async (sql, params = []) => (await client.query(sql, bind(params))).rowCount ?? 0,
      };
      try {
        const result = await body(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw error;
      }
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  async exec(script: string): Promise<void> {
    await this.pool.query(script);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
