/** Opens the configured store: PostgreSQL when a database URL is given, else SQLite in the data dir. */
import { join } from 'node:path';
import { ensureDir } from '../../config/index.js';
import { PostgresDb } from './postgres/PostgresDb.js';
import { SqlGatewayStore } from './SqlGatewayStore.js';
import { SqliteDb } from './sqlite/SqliteDb.js';

export interface CreateStoreOptions {
  dataDir: string;
  /** PostgreSQL URL; absent = `<data-dir>/gateway/gateway.db`. */
  databaseUrl?: string;
  /** SQLite file override (`:memory:` in tests). */
  sqlitePath?: string;
  /** How long SQLite waits for another process's write lock before failing (default 5000 ms). */
  sqliteBusyTimeoutMs?: number;
  /** Checkpoint SQLite's WAL from a worker thread every this many ms (long-running gateways). */
  sqliteBackgroundCheckpointMs?: number;
  now?: () => number;
}

/** Opens and migrates the store. */
export async function createStore(options: CreateStoreOptions): Promise<SqlGatewayStore> {
  const db = options.databaseUrl
    ? new PostgresDb(options.databaseUrl)
    : new SqliteDb(
        options.sqlitePath ?? join(ensureDir(join(options.dataDir, 'gateway')), 'gateway.db'),
        options.sqliteBusyTimeoutMs,
        { backgroundCheckpointMs: options.sqliteBackgroundCheckpointMs },
      );
  const store = new SqlGatewayStore(db, options.now);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
