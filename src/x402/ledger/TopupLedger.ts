/**
 * The store operations top-ups need. The gateway store implements them (SQLite / Postgres) next
 * to its keys table; `MemoryTopupLedger` is the reference used by unit tests.
 *
 * Exactly-once crediting rests on two rules every implementation keeps:
 * 1. (network, asset, payer, nonce) is unique: one authorization is one row, forever.
 * 2. `creditTopup` moves a row pending -> credited AND adds its amount to the key's topped-up
 *    total in one atomic step, and does nothing when the row is not pending.
 */
import type { Address, Hex } from 'viem';
import type { MicroUsd } from '../../money/index.js';

export type TopupState = 'pending' | 'credited' | 'failed';

/** The identity of one EIP-3009 authorization. Addresses and nonce are lower-case. */
export interface TopupPaymentId {
  network: string;
  asset: Address;
  payer: Address;
  nonce: Hex;
}

/** A row to insert as `pending` before the facilitator settles. */
export interface NewTopup extends TopupPaymentId {
  id: string;
  keyId: string;
  payTo: Address;
  amountMicro: MicroUsd;
  /** Unix seconds after which the authorization can never settle. */
  validBefore: bigint;
  /** A block at or before any settlement transaction (bounds the reconcile log search). */
  fromBlock: bigint;
  atMs: number;
}

export interface TopupRow extends NewTopup {
  state: TopupState;
  transaction: string | null;
  errorReason: string | null;
  updatedAtMs: number;
}

export interface BeginTopupResult {
  row: TopupRow;
  /** False when the authorization was already known (replay, or a settlement in flight). */
  created: boolean;
}

export interface TopupLedger {
  /**
   * Records a pending row. When the authorization is already known, returns that row with
   * `created: false` — except a `failed` row (nothing moved on chain), which is re-armed as
   * pending with the new request's fields and returned with `created: true`.
   */
  beginTopup(topup: NewTopup): Promise<BeginTopupResult>;
  /** pending -> credited plus the key's topped-up total, atomically; false if not pending. */
  creditTopup(id: string, transaction: string, atMs: number): Promise<boolean>;
  /** pending -> failed (nothing was transferred); false if not pending. */
  failTopup(id: string, reason: string, atMs: number): Promise<boolean>;
  /** Rows still pending, oldest first (reconciled at start and periodically). */
  listPendingTopups(): Promise<TopupRow[]>;
  /** Total credited to a key, micro-USD (`usage.topped_up_usd` of GET /v1/key). */
  toppedUpMicro(keyId: string): Promise<MicroUsd>;
}

/** Lower-cases the parts of a payment id so lookups never depend on checksum casing. */
export function normalizePaymentId<T extends TopupPaymentId>(id: T): T {
  return {
    ...id,
    network: id.network,
    asset: id.asset.toLowerCase() as Address,
    payer: id.payer.toLowerCase() as Address,
    nonce: id.nonce.toLowerCase() as Hex,
  };
}
