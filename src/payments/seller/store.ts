/** The seller's persisted channel state (`<data-dir>/payments/seller.db`). */
import type { DatabaseSync } from 'node:sqlite';
import type { Address, Hex } from 'viem';
import { openPaymentsDb, statementCache } from '../sqlite.js';

export type SellerChannelStatus = 'open' | 'closed';

export interface SellerChannelRow {
  channelId: Hex;
  buyer: Address;
  salt: Hex;
  lockMicro: bigint;
  settledMicro: bigint;
  /** Highest valid cumulative voucher received. */
  voucherMicro: bigint;
  voucherSignature: Hex | null;
  /** Sum of what the seller billed (its own usage counts). */
  billedMicro: bigint;
  requests: number;
  status: SellerChannelStatus;
  closeRequested: boolean;
  lastActivityMs: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS channels (
  channel_id TEXT PRIMARY KEY,
  buyer TEXT NOT NULL,
  salt TEXT NOT NULL,
  lock_micro TEXT NOT NULL,
  settled_micro TEXT NOT NULL,
  voucher_micro TEXT NOT NULL,
  voucher_sig TEXT,
  billed_micro TEXT NOT NULL,
  requests INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  close_requested INTEGER NOT NULL DEFAULT 0,
  last_activity_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS billed_once (key TEXT PRIMARY KEY, at_ms INTEGER NOT NULL);
`;

interface Row {
  channel_id: string;
  buyer: string;
  salt: string;
  lock_micro: string;
  settled_micro: string;
  voucher_micro: string;
  voucher_sig: string | null;
  billed_micro: string;
  requests: number;
  status: string;
  close_requested: number;
  last_activity_ms: number;
}

function fromRow(row: Row): SellerChannelRow {
  return {
    channelId: row.channel_id as Hex,
    buyer: row.buyer as Address,
    salt: row.salt as Hex,
    lockMicro: BigInt(row.lock_micro),
    settledMicro: BigInt(row.settled_micro),
    voucherMicro: BigInt(row.voucher_micro),
    voucherSignature: row.voucher_sig as Hex | null,
    billedMicro: BigInt(row.billed_micro),
    requests: row.requests,
    status: row.status as SellerChannelStatus,
    closeRequested: row.close_requested === 1,
    lastActivityMs: row.last_activity_ms,
  };
}

/** Channel rows and the event cursor of one seller. */
export class SellerStore {
  private readonly db: DatabaseSync;
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(dataDir: string) {
    this.db = openPaymentsDb(dataDir, 'seller.db', SCHEMA);
    this.sql = statementCache(this.db);
  }

  get(channelId: Hex): SellerChannelRow | undefined {
    const row = this.sql('SELECT * FROM channels WHERE channel_id = ?').get(
      channelId.toLowerCase(),
    ) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  list(status?: SellerChannelStatus): SellerChannelRow[] {
    const rows = (status
      ? this.sql('SELECT * FROM channels WHERE status = ? ORDER BY last_activity_ms').all(status)
      : this.sql('SELECT * FROM channels ORDER BY last_activity_ms').all()) as unknown as Row[];
    return rows.map(fromRow);
  }

  put(channel: SellerChannelRow): void {
    this.sql(
      `INSERT INTO channels (channel_id, buyer, salt, lock_micro, settled_micro, voucher_micro, voucher_sig,
           billed_micro, requests, status, close_requested, last_activity_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(channel_id) DO UPDATE SET lock_micro = excluded.lock_micro,
           settled_micro = excluded.settled_micro, voucher_micro = excluded.voucher_micro,
           voucher_sig = excluded.voucher_sig, billed_micro = excluded.billed_micro,
           requests = excluded.requests, status = excluded.status,
           close_requested = excluded.close_requested, last_activity_ms = excluded.last_activity_ms`,
    ).run(
      channel.channelId.toLowerCase(),
      channel.buyer,
      channel.salt,
      channel.lockMicro.toString(),
      channel.settledMicro.toString(),
      channel.voucherMicro.toString(),
      channel.voucherSignature,
      channel.billedMicro.toString(),
      channel.requests,
      channel.status,
      channel.closeRequested ? 1 : 0,
      channel.lastActivityMs,
    );
  }

  /** Read-modify-write of one row with no await in between (callers' copies may be stale). */
  patch(
    channelId: Hex,
    change: (row: SellerChannelRow) => SellerChannelRow,
  ): SellerChannelRow | undefined {
    const row = this.get(channelId);
    if (!row) return undefined;
    const next = change(row);
    this.put(next);
    return next;
  }

  getMeta(key: string): string | undefined {
    const row = this.sql('SELECT value FROM meta WHERE key = ?').get(key) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  setMeta(key: string, value: string): void {
    this.sql(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
    ).run(key, value);
  }

  /** True the first time `key` is claimed; false ever after (survives restarts). */
  claimOnce(key: string, nowMs: number): boolean {
    const result = this.sql('INSERT OR IGNORE INTO billed_once (key, at_ms) VALUES (?, ?)').run(
      key,
      nowMs,
    );
    return Number(result.changes) === 1;
  }

  close(): void {
    this.db.close();
  }
}
