/**
 * The small SQL seam both stores share: one dialect-neutral query surface (`$1` placeholders),
 * transactions that hold the write lock for their whole body (SQLite `BEGIN IMMEDIATE`,
 * PostgreSQL row locks via `FOR UPDATE`), and values normalised to JS types.
 */

/** A row as the driver returns it: column name -> value. */
export type SqlRow = Record<string, unknown>;

/** A query surface: plain statements, or the inside of a transaction. */
export interface SqlExecutor {
  /** Runs `sql` (placeholders `$1`, `$2`, ...) and returns its rows. */
  query(sql: string, params?: readonly SqlParam[]): Promise<SqlRow[]>;
  /** Rows affected by an INSERT/UPDATE/DELETE. */
  run(sql: string, params?: readonly SqlParam[]): Promise<number>;
  /** `' FOR UPDATE'` where the dialect has row locks, `''` where the transaction already locks. */
  readonly forUpdate: string;
}

/** A value bound to a placeholder. Money travels as bigint micro-USD. */
export type SqlParam = string | number | bigint | boolean | null;

/** A connection (pool) that can run transactions. */
export interface SqlDb extends SqlExecutor {
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs `body` in one transaction holding the write lock; commits, or rolls back on throw. */
  transaction<T>(body: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * SQLite: a number that changes whenever a row of `tables` may have changed (any connection);
   * absent where that cannot be known cheaply (PostgreSQL).
   */
  changeEpoch?(tables: readonly string[]): number;
  /** Runs several statements separated by semicolons (migrations). */
  exec(script: string): Promise<void>;
  close(): Promise<void>;
}

/** Reads an integer column as bigint (drivers return number, bigint or string). */
export function bigintOf(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(value);
  if (typeof value === 'string') return BigInt(value);
  return 0n;
}

/** Reads a nullable integer column as bigint or null. */
export function bigintOrNull(value: unknown): bigint | null {
  return value === null || value === undefined ? null : bigintOf(value);
}

/** Reads an integer column as a number. */
export function numberOf(value: unknown): number {
  if (value === null || value === undefined) return 0;
  return Number(value);
}

/** Reads a text column. */
export function textOf(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

/** Reads a nullable text column. */
export function textOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}
