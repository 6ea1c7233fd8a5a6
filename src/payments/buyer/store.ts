/** The buyer's persisted channels and vouchers (`<data-dir>/payments/buyer.db`). */
import type { DatabaseSync } from 'node:sqlite';
import type { Address, Hex } from 'viem';
import { openPaymentsDb, statementCache } from '../sqlite.js';

/** `open`: usable; `closing`: buyer asked to close, waiting for grace; `closed`: done. */
export type BuyerChannelStatus = 'open' | 'closing' | 'closed';

export interface BuyerChannelRow {
  channelId: Hex;
  identity: string;
  buyer: Address;
  seller: Address;
  salt: Hex;
  /** Lock the buyer has authorised (signed reserve). */
  authorisedLockMicro: bigint;
  /** Lock known to be on chain (seller served under it, or read from chain). */
  confirmedLockMicro: bigint;
  reserveDeadline: bigint;
  reserveSignature: Hex | null;
  /** Highest cumulative voucher signed. */
  signedMicro: bigint;
  voucherSignature: Hex | null;
  settledMicro: bigint;
  status: BuyerChannelStatus;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  refusedClaims: number;
  /** Unix seconds the buyer may reclaim, 0 when no close was requested. */
  reclaimableAt: number;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface VoucherRecord {
  requestId: string;
  channelId: Hex;
  amountMicro: bigint;
  cumulativeMicro: bigint;
  claimedMicro: bigint;
  estimatedMicro: bigint;
  refused: boolean;
  createdAtMs: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS channels (
  channel_id TEXT PRIMARY KEY,
  identity TEXT NOT NULL,
  buyer TEXT NOT NULL,
  seller TEXT NOT NULL,
  salt TEXT NOT NULL,
  authorised_lock TEXT NOT NULL,
  confirmed_lock TEXT NOT NULL,
  reserve_deadline TEXT NOT NULL,
  reserve_sig TEXT,
  signed_micro TEXT NOT NULL,
  voucher_sig TEXT,
  settled_micro TEXT NOT NULL,
  status TEXT NOT NULL,
  requests INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  cached_input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  refused_claims INTEGER NOT NULL,
  reclaimable_at INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS channels_by_pair ON channels (identity, seller, status);
CREATE TABLE IF NOT EXISTS vouchers (
  request_id TEXT PRIMARY KEY,
  channel_id TEXT NOT NULL,
  amount_micro TEXT NOT NULL,
  cumulative_micro TEXT NOT NULL,
  claimed_micro TEXT NOT NULL,
  estimated_micro TEXT NOT NULL,
  refused INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL
);
`;

type Row = Record<string, string | number | null>;

function fromRow(row: Row): BuyerChannelRow {
  return {
    channelId: row.channel_id as Hex,
    identity: row.identity as string,
    buyer: row.buyer as Address,
    seller: row.seller as Address,
    salt: row.salt as Hex,
    authorisedLockMicro: BigInt(row.authorised_lock as string),
    confirmedLockMicro: BigInt(row.confirmed_lock as string),
    reserveDeadline: BigInt(row.reserve_deadline as string),
    reserveSignature: row.reserve_sig as Hex | null,
    signedMicro: BigInt(row.signed_micro as string),
    voucherSignature: row.voucher_sig as Hex | null,
    settledMicro: BigInt(row.settled_micro as string),
    status: row.status as BuyerChannelStatus,
    requests: row.requests as number,
    inputTokens: row.input_tokens as number,
    cachedInputTokens: row.cached_input_tokens as number,
    outputTokens: row.output_tokens as number,
    refusedClaims: row.refused_claims as number,
    reclaimableAt: row.reclaimable_at as number,
    createdAtMs: row.created_at_ms as number,
    updatedAtMs: row.updated_at_ms as number,
  };
}

/** Channel rows and voucher history of one buyer data directory. */
export class BuyerStore {
  private readonly db: DatabaseSync;
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(dataDir: string) {
    this.db = openPaymentsDb(dataDir, 'buyer.db', SCHEMA);
    this.sql = statementCache(this.db);
  }

  get(channelId: Hex): BuyerChannelRow | undefined {
    const row = this.sql('SELECT * FROM channels WHERE channel_id = ?').get(
      channelId.toLowerCase(),
    ) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** The open channel of an identity with a seller, if any. */
  findOpen(identity: string, seller: Address): BuyerChannelRow | undefined {
    const row = this.sql(
      "SELECT * FROM channels WHERE identity = ? AND seller = ? AND status = 'open' ORDER BY created_at_ms DESC LIMIT 1",
    ).get(identity, seller.toLowerCase()) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  list(filter: { identity?: string; status?: BuyerChannelStatus[] } = {}): BuyerChannelRow[] {
    const rows = this.sql('SELECT * FROM channels ORDER BY created_at_ms').all() as Row[];
    return rows
      .map(fromRow)
      .filter(
        (row) =>
          (filter.identity === undefined || row.identity === filter.identity) &&
          (filter.status === undefined || filter.status.includes(row.status)),
      );
  }

  put(channel: BuyerChannelRow): void {
    this.sql(
      `INSERT OR REPLACE INTO channels (channel_id, identity, buyer, seller, salt, authorised_lock, confirmed_lock,
           reserve_deadline, reserve_sig, signed_micro, voucher_sig, settled_micro, status, requests, input_tokens,
           cached_input_tokens, output_tokens, refused_claims, reclaimable_at, created_at_ms, updated_at_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      channel.channelId.toLowerCase(),
      channel.identity,
      channel.buyer.toLowerCase(),
      channel.seller.toLowerCase(),
      channel.salt,
      channel.authorisedLockMicro.toString(),
      channel.confirmedLockMicro.toString(),
      channel.reserveDeadline.toString(),
      channel.reserveSignature,
      channel.signedMicro.toString(),
      channel.voucherSignature,
      channel.settledMicro.toString(),
      channel.status,
      channel.requests,
      channel.inputTokens,
      channel.cachedInputTokens,
      channel.outputTokens,
      channel.refusedClaims,
      channel.reclaimableAt,
      channel.createdAtMs,
      channel.updatedAtMs,
    );
  }

  /** Refused usage claims per seller (lowercase address) since a time, from the voucher history. */
  refusedClaimsSince(sinceMs: number): Map<Address, number> {
    const rows = this.sql(
      `SELECT c.seller AS seller, COUNT(*) AS refused FROM vouchers v
           JOIN channels c ON c.channel_id = v.channel_id
          WHERE v.refused = 1 AND v.created_at_ms >= ? GROUP BY c.seller`,
    ).all(sinceMs) as Row[];
    return new Map(rows.map((row) => [row.seller as Address, Number(row.refused)]));
  }

  addVoucher(record: VoucherRecord): void {
    this.sql(
      `INSERT OR REPLACE INTO vouchers (request_id, channel_id, amount_micro, cumulative_micro, claimed_micro,
           estimated_micro, refused, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      record.requestId,
      record.channelId.toLowerCase(),
      record.amountMicro.toString(),
      record.cumulativeMicro.toString(),
      record.claimedMicro.toString(),
      record.estimatedMicro.toString(),
      record.refused ? 1 : 0,
      record.createdAtMs,
    );
  }

  close(): void {
    this.db.close();
  }
}
