/** Opens the payments SQLite databases under `<data-dir>/payments/` (WAL, busy timeout). */
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { ensureDir } from '../config/index.js';

/** Opens `<dataDir>/payments/<file>` and applies `schema` (idempotent DDL). */
export function openPaymentsDb(dataDir: string, file: string, schema: string): DatabaseSync {
  const dir = ensureDir(join(dataDir, 'payments'));
  const db = new DatabaseSync(join(dir, file));
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
  db.exec(schema);
  return db;
}

/**
 * `db.prepare`, each text prepared once: node:sqlite does not cache statements, and preparing
 * costs more than running one of these (several per paid request).
 */
export function statementCache(db: DatabaseSync): (sql: string) => StatementSync {
  const prepared = new Map<string, StatementSync>();
  return (sql) => {
    let statement = prepared.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      prepared.set(sql, statement);
    }
    return statement;
  };
}
