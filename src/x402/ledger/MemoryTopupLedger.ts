/** In-memory `TopupLedger`: the reference semantics, used by unit tests. */
import type { MicroUsd } from '../../money/index.js';
import {
  type BeginTopupResult,
  type NewTopup,
  normalizePaymentId,
  type TopupLedger,
  type TopupPaymentId,
  type TopupRow,
} from './TopupLedger.js';

export class MemoryTopupLedger implements TopupLedger {
  private readonly rows = new Map<string, TopupRow>();
  private readonly byPayment = new Map<string, string>();
  private readonly credited = new Map<string, MicroUsd>();

  async beginTopup(topup: NewTopup): Promise<BeginTopupResult> {
    const normalized = normalizePaymentId(topup);
    const paymentKey = keyOf(normalized);
    const existingId = this.byPayment.get(paymentKey);
    const existing = existingId ? this.rows.get(existingId) : undefined;
    if (existing && existing.state !== 'failed') return { row: { ...existing }, created: false };
    if (existing) {
      const rearmed: TopupRow = {
        ...normalized,
        id: existing.id,
        state: 'pending',
        transaction: null,
        errorReason: null,
        updatedAtMs: topup.atMs,
      };
      this.rows.set(existing.id, rearmed);
      return { row: { ...rearmed }, created: true };
    }
    const row: TopupRow = {
      ...normalized,
      state: 'pending',
      transaction: null,
      errorReason: null,
      updatedAtMs: topup.atMs,
    };
    this.rows.set(row.id, row);
    this.byPayment.set(paymentKey, row.id);
    return { row: { ...row }, created: true };
  }

  async creditTopup(id: string, transaction: string, atMs: number): Promise<boolean> {
    const row = this.rows.get(id);
    if (row?.state !== 'pending') return false;
    this.rows.set(id, { ...row, state: 'credited', transaction, updatedAtMs: atMs });
    this.credited.set(row.keyId, (this.credited.get(row.keyId) ?? 0n) + row.amountMicro);
    return true;
  }

  async failTopup(id: string, reason: string, atMs: number): Promise<boolean> {
    const row = this.rows.get(id);
    if (row?.state !== 'pending') return false;
    this.rows.set(id, { ...row, state: 'failed', errorReason: reason, updatedAtMs: atMs });
    return true;
  }

  async listPendingTopups(): Promise<TopupRow[]> {
    return [...this.rows.values()]
      .filter((row) => row.state === 'pending')
      .sort((a, b) => a.atMs - b.atMs)
      .map((row) => ({ ...row }));
  }

  async toppedUpMicro(keyId: string): Promise<MicroUsd> {
    return this.credited.get(keyId) ?? 0n;
  }

  /** Test helper: the row of an id. */
  get(id: string): TopupRow | undefined {
    const row = this.rows.get(id);
    return row ? { ...row } : undefined;
  }
}

function keyOf(id: TopupPaymentId): string {
  return `${id.network}|${id.asset}|${id.payer}|${id.nonce}`;
}
