/**
 * What the indexer keeps (decision 130): the contract's stats events with the block cursor that
 * says how far they are complete, and the last built snapshot, which every indexer process sharing
 * the database serves. One SQL text for SQLite and PostgreSQL (the gateway's `SqlDb` seam).
 */
import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import { ensureDir } from '../config/index.js';
import { bigintOf, numberOf, PostgresDb, type SqlDb, SqliteDb, textOf } from '../gateway/index.js';
import type { ChainEvent, ChainEventKind } from './chainEvents.js';

const MIGRATION = [
  `CREATE TABLE IF NOT EXISTS indexer_cursor (
     name TEXT PRIMARY KEY,
     block BIGINT NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS indexer_events (
     block_number BIGINT NOT NULL,
     log_index INTEGER NOT NULL,
     kind TEXT NOT NULL,
     channel_id TEXT NOT NULL,
     seller TEXT NOT NULL,
     buyer TEXT NOT NULL,
     amount_micro BIGINT NOT NULL,
     reclaimed INTEGER NOT NULL,
     block_time BIGINT NOT NULL,
     PRIMARY KEY (block_number, log_index)
   )`,
  `CREATE TABLE IF NOT EXISTS indexer_snapshot (
     name TEXT PRIMARY KEY,
     body TEXT NOT NULL,
     built_at BIGINT NOT NULL
   )`,
];

/** A stored snapshot body (JSON text) and when it was built (unix ms). */
export interface StoredSnapshot {
  body: string;
  builtAt: number;
}

export interface OpenIndexerStoreOptions {
  dataDir: string;
  /** PostgreSQL URL; absent = `<data-dir>/indexer/indexer.db`. */
  databaseUrl?: string;
}

/** The indexer's tables over one SqlDb. */
export class IndexerStore {
  constructor(readonly db: SqlDb) {}

  /** Creates the tables when missing. */
  async migrate(): Promise<void> {
    await this.db.transaction(async (tx) => {
      // Indexers starting together must not race on CREATE TABLE.
      if (this.db.dialect === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(8380130)');
      for (const statement of MIGRATION) await tx.run(statement);
    });
  }

  /** Last block whose events are all stored, or undefined before the first read. */
  async cursor(): Promise<bigint | undefined> {
    const rows = await this.db.query(`SELECT block FROM indexer_cursor WHERE name = 'chain'`);
    return rows[0] ? bigintOf(rows[0].block) : undefined;
  }

  /**
   * Stores the events of blocks up to `toBlock` and moves the cursor there, in one transaction:
   * a crash leaves either both or neither, and an event stored twice is ignored (its primary
   * key is its chain position), so volume is never counted twice.
   */
  async append(events: readonly ChainEvent[], toBlock: bigint): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const event of events) {
        await tx.run(
          `INSERT INTO indexer_events
             (block_number, log_index, kind, channel_id, seller, buyer, amount_micro, reclaimed, block_time)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (block_number, log_index) DO NOTHING`,
          [
            event.blockNumber,
            event.logIndex,
            event.kind,
            event.channelId,
            event.seller,
            event.buyer,
            event.amountMicro,
            event.reclaimed ? 1 : 0,
            event.blockTime,
          ],
        );
      }
      await tx.run(
        `INSERT INTO indexer_cursor (name, block) VALUES ('chain', $1)
         ON CONFLICT (name) DO UPDATE SET block = excluded.block`,
        [toBlock],
      );
    });
  }

  /** Every stored event in chain order. */
  async events(): Promise<ChainEvent[]> {
    const rows = await this.db.query(
      'SELECT * FROM indexer_events ORDER BY block_number, log_index',
    );
    return rows.map((row) => ({
      blockNumber: bigintOf(row.block_number),
      logIndex: numberOf(row.log_index),
      kind: textOf(row.kind) as ChainEventKind,
      channelId: textOf(row.channel_id) as Hex,
      seller: textOf(row.seller) as Address,
      buyer: textOf(row.buyer) as Address,
      amountMicro: bigintOf(row.amount_micro),
      reclaimed: numberOf(row.reclaimed) === 1,
      blockTime: numberOf(row.block_time),
    }));
  }

  async saveSnapshot(snapshot: StoredSnapshot): Promise<void> {
    await this.db.run(
      `INSERT INTO indexer_snapshot (name, body, built_at) VALUES ('stats', $1, $2)
       ON CONFLICT (name) DO UPDATE SET body = excluded.body, built_at = excluded.built_at`,
      [snapshot.body, snapshot.builtAt],
    );
  }

  /** The latest stored snapshot, or undefined when none was built yet. */
  async loadSnapshot(): Promise<StoredSnapshot | undefined> {
    const rows = await this.db.query(
      `SELECT body, built_at FROM indexer_snapshot WHERE name = 'stats'`,
    );
    return rows[0]
      ? { body: textOf(rows[0].body), builtAt: numberOf(rows[0].built_at) }
      : undefined;
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/** Opens and migrates the store: PostgreSQL with a URL, else SQLite in the data dir. */
export async function openIndexerStore(options: OpenIndexerStoreOptions): Promise<IndexerStore> {
  const db = options.databaseUrl
    ? new PostgresDb(options.databaseUrl, 4)
    : new SqliteDb(join(ensureDir(join(options.dataDir, 'indexer')), 'indexer.db'));
  const store = new IndexerStore(db);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
