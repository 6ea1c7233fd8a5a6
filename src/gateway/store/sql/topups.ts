/**
 * x402 top-up rows (src/x402 TopupLedger) next to the keys they credit. A payment is one row
 * forever: (network, asset, payer, nonce) is UNIQUE. Crediting moves the row pending -> credited
 * and adds to api_keys.topped_up in one transaction, so a payment is credited exactly once.
 */
import type { Address, Hex } from 'viem';
// The ledger's contract from its own module: the x402 index loads viem's chain clients, which a
// command that only reads the store (`svc gateway key list`) never needs.
import {
  type BeginTopupResult,
  type NewTopup,
  normalizePaymentId,
  type TopupLedger,
  type TopupRow,
  type TopupState,
} from '../../../x402/ledger/TopupLedger.js';
import { bigintOf, numberOf, type SqlDb, type SqlRow, textOf, textOrNull } from './SqlDb.js';

/** Migration statements creating the table (schema version 2). */
export const TOPUP_MIGRATION = [
  `CREATE TABLE topups (id TEXT PRIMARY KEY, key_id TEXT NOT NULL REFERENCES api_keys(id),
    network TEXT NOT NULL, asset TEXT NOT NULL, payer TEXT NOT NULL, nonce TEXT NOT NULL,
    pay_to TEXT NOT NULL, amount BIGINT NOT NULL, valid_before BIGINT NOT NULL,
    from_block BIGINT NOT NULL, state TEXT NOT NULL, tx TEXT, error_reason TEXT,
    created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
    UNIQUE (network, asset, payer, nonce))`,
  'CREATE INDEX topups_state ON topups (state, created_at)',
];

/** validBefore is a uint256; past this it is "never expires" for reconciling (fits BIGINT). */
const MAX_STORED_SECONDS = 2n ** 62n;

function rowOf(row: SqlRow): TopupRow {
  return {
    id: textOf(row.id),
    keyId: textOf(row.key_id),
    network: textOf(row.network),
    asset: textOf(row.asset) as Address,
    payer: textOf(row.payer) as Address,
    nonce: textOf(row.nonce) as Hex,
    payTo: textOf(row.pay_to) as Address,
    amountMicro: bigintOf(row.amount),
    validBefore: bigintOf(row.valid_before),
    fromBlock: bigintOf(row.from_block),
    atMs: numberOf(row.created_at),
    state: textOf(row.state) as TopupState,
    transaction: textOrNull(row.tx),
    errorReason: textOrNull(row.error_reason),
    updatedAtMs: numberOf(row.updated_at),
  };
}

export class SqlTopupLedger implements TopupLedger {
  private readonly db: SqlDb;

  constructor(db: SqlDb) {
    this.db = db;
  }

  async beginTopup(topup: NewTopup): Promise<BeginTopupResult> {
    const t = normalizePaymentId(topup);
    const validBefore = t.validBefore > MAX_STORED_SECONDS ? MAX_STORED_SECONDS : t.validBefore;
    const inserted = await this.db.run(
      `INSERT INTO topups (id, key_id, network, asset, payer, nonce, pay_to, amount, valid_before,
         from_block, state, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11, $11)
       ON CONFLICT (network, asset, payer, nonce) DO NOTHING`,
      [
        t.id,
        t.keyId,
        t.network,
        t.asset,
        t.payer,
        t.nonce,
        t.payTo.toLowerCase(),
        t.amountMicro,
        validBefore,
        t.fromBlock,
        t.atMs,
      ],
    );
    if (inserted === 1) return { row: await this.byPayment(t), created: true };
    // A failed row moved nothing on chain: the same authorization may be tried again.
    const rearmed = await this.db.run(
      `UPDATE topups SET state = 'pending', key_id = $5, pay_to = $6, amount = $7, valid_before = $8,
         from_block = $9, tx = NULL, error_reason = NULL, updated_at = $10
       WHERE network = $1 AND asset = $2 AND payer = $3 AND nonce = $4 AND state = 'failed'`,
      [
        t.network,
        t.asset,
        t.payer,
        t.nonce,
        t.keyId,
        t.payTo.toLowerCase(),
        t.amountMicro,
        validBefore,
        t.fromBlock,
        t.atMs,
      ],
    );
    return { row: await this.byPayment(t), created: rearmed === 1 };
  }

  creditTopup(id: string, transaction: string, atMs: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const moved = await tx.run(
        `UPDATE topups SET state = 'credited', tx = $2, updated_at = $3 WHERE id = $1 AND state = 'pending'`,
        [id, transaction, atMs],
      );
      if (moved !== 1) return false;
      await tx.run(
        `UPDATE api_keys SET topped_up = topped_up + (SELECT amount FROM topups WHERE id = $1)
         WHERE id = (SELECT key_id FROM topups WHERE id = $1)`,
        [id],
      );
      return true;
    });
  }

  async failTopup(id: string, reason: string, atMs: number): Promise<boolean> {
    const moved = await this.db.run(
      `UPDATE topups SET state = 'failed', error_reason = $2, updated_at = $3 WHERE id = $1 AND state = 'pending'`,
      [id, reason, atMs],
    );
    return moved === 1;
  }

  async listPendingTopups(): Promise<TopupRow[]> {
    const rows = await this.db.query(
      `SELECT * FROM topups WHERE state = 'pending' ORDER BY created_at, id`,
    );
    return rows.map(rowOf);
  }

  async toppedUpMicro(keyId: string): Promise<bigint> {
    const rows = await this.db.query('SELECT topped_up FROM api_keys WHERE id = $1', [keyId]);
    return rows[0] ? bigintOf(rows[0].topped_up) : 0n;
  }

  private async byPayment(t: NewTopup): Promise<TopupRow> {
    const rows = await this.db.query(
      'SELECT * FROM topups WHERE network = $1 AND asset = $2 AND payer = $3 AND nonce = $4',
      [t.network, t.asset, t.payer, t.nonce],
    );
    return rowOf(rows[0]!);
  }
}
