/**
 * The shared contract every TopupLedger passes (memory here; SQLite and Postgres in the gateway
 * store). Call inside a test file: `topupLedgerContract('sqlite', setup)`.
 */

import type { Address, Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import type { NewTopup, TopupLedger } from '../ledger/TopupLedger.js';

export interface TopupLedgerFixture {
  ledger: TopupLedger;
  /** Creates a key the ledger may credit (stores with foreign keys need a real row). */
  newKeyId(): Promise<string>;
}

let counter = 0;

/** A pending top-up with unique ids; `overrides` pick fields. */
export function sampleTopup(keyId: string, overrides: Partial<NewTopup> = {}): NewTopup {
  counter += 1;
  const nonce = `0x${counter.toString(16).padStart(64, '0')}` as Hex;
  return {
    id: `topup_contract_${Date.now()}_${counter}`,
    keyId,
    network: 'eip155:31337',
    asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3' as Address,
    payer: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as Address,
    nonce,
    payTo: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' as Address,
    amountMicro: 5_000_000n,
    validBefore: 2_000_000_000n,
    fromBlock: 7n,
    atMs: Date.now(),
    ...overrides,
  };
}

export function topupLedgerContract(name: string, setup: () => Promise<TopupLedgerFixture>): void {
  describe(`TopupLedger contract: ${name}`, () => {
    it('records a pending row and credits it exactly once', async () => {
      const { ledger, newKeyId } = await setup();
      const keyId = await newKeyId();
      const topup = sampleTopup(keyId);
      const begun = await ledger.beginTopup(topup);
      expect(begun.created).toBe(true);
      expect(begun.row.state).toBe('pending');
      expect(begun.row.amountMicro).toBe(5_000_000n);
      expect((await ledger.listPendingTopups()).map((row) => row.id)).toContain(topup.id);
      expect(await ledger.creditTopup(topup.id, '0xabc', Date.now())).toBe(true);
      expect(await ledger.creditTopup(topup.id, '0xabc', Date.now())).toBe(false);
      expect(await ledger.toppedUpMicro(keyId)).toBe(5_000_000n);
      expect((await ledger.listPendingTopups()).map((row) => row.id)).not.toContain(topup.id);
    });

    it('treats the same (network, asset, payer, nonce) as one payment, whatever the casing', async () => {
      const { ledger, newKeyId } = await setup();
      const keyId = await newKeyId();
      const topup = sampleTopup(keyId);
      await ledger.beginTopup(topup);
      await ledger.creditTopup(topup.id, '0xdef', Date.now());
      const again = await ledger.beginTopup({
        ...topup,
        id: `${topup.id}_again`,
        payer: topup.payer.toLowerCase() as Address,
        asset: topup.asset.toUpperCase().replace('0X', '0x') as Address,
        nonce: topup.nonce.toUpperCase().replace('0X', '0x') as Hex,
      });
      expect(again.created).toBe(false);
      expect(again.row.id).toBe(topup.id);
      expect(again.row.state).toBe('credited');
      expect(again.row.transaction).toBe('0xdef');
      expect(await ledger.toppedUpMicro(keyId)).toBe(5_000_000n);
    });

    it('returns a pending row to a concurrent duplicate instead of a second row', async () => {
      const { ledger, newKeyId } = await setup();
      const keyId = await newKeyId();
      const topup = sampleTopup(keyId);
      const [a, b] = await Promise.all([
        ledger.beginTopup(topup),
        ledger.beginTopup({ ...topup, id: `${topup.id}_b` }),
      ]);
      expect([a.created, b.created].sort()).toEqual([false, true]);
      expect(a.row.id).toBe(b.row.id);
    });

    it('re-arms a failed row (nothing moved on chain) and never credits a failed row', async () => {
      const { ledger, newKeyId } = await setup();
      const keyId = await newKeyId();
      const topup = sampleTopup(keyId);
      await ledger.beginTopup(topup);
      expect(await ledger.failTopup(topup.id, 'facilitator_unreachable', Date.now())).toBe(true);
      expect(await ledger.creditTopup(topup.id, '0x1', Date.now())).toBe(false);
      expect(await ledger.toppedUpMicro(keyId)).toBe(0n);
      const again = await ledger.beginTopup({
        ...topup,
        id: `${topup.id}_retry`,
        amountMicro: 5_000_000n,
      });
      expect(again.created).toBe(true);
      expect(again.row.state).toBe('pending');
      expect(await ledger.creditTopup(again.row.id, '0x2', Date.now())).toBe(true);
      expect(await ledger.failTopup(again.row.id, 'late', Date.now())).toBe(false);
      expect(await ledger.toppedUpMicro(keyId)).toBe(5_000_000n);
    });

    it('sums credits per key', async () => {
      const { ledger, newKeyId } = await setup();
      const keyA = await newKeyId();
      const keyB = await newKeyId();
      for (const [keyId, amount] of [
        [keyA, 2_000_000n],
        [keyA, 3_500_000n],
        [keyB, 9_000_000n],
      ] as const) {
        const topup = sampleTopup(keyId, { amountMicro: amount });
        await ledger.beginTopup(topup);
        await ledger.creditTopup(topup.id, '0x1', Date.now());
      }
      expect(await ledger.toppedUpMicro(keyA)).toBe(5_500_000n);
      expect(await ledger.toppedUpMicro(keyB)).toBe(9_000_000n);
    });
  });
}
