/**
 * A restarted buyer closes the records a killed run left open, paying what journaled streams
 * delivered (docs/decisions/154-late-voucher-after-a-crash.md). The payments here stand in for
 * the channel service; src/node/latePayment.test.ts runs the real one on anvil.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../log/index.js';
import { type MicroUsd, toPriceMicro } from '../money/index.js';
import { closeOpenRecords } from './closeOpenRecords.js';
import { type BuyerPayments, type LatePaymentInput, NO_PAYMENTS } from './payments.js';
import { type RequestRecord, RequestRecords } from './requestRecords.js';
import { encodeStreamPayment, type StreamPayment } from './streamProgress.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const SELLER = 'ab'.repeat(20);
/** $3/M input, $20/M output: 1,000 input + 10 output tokens cost 3,200 µUSD. */
const PRICE = toPriceMicro({ inputUsdPerMillion: 3, outputUsdPerMillion: 20 });

function openRecord(requestId: string): RequestRecord {
  return {
    requestId,
    status: 200,
    completed: false,
    streamed: true,
    peerId: SELLER,
    provider: 'openai',
    serviceId: 'm',
    model: 'm',
    usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
    costUsd: '0.000000',
    latencyMs: 1,
    attempts: [],
  };
}

function progress(outputTokens: number, maxCostMicro: MicroUsd = 1_000_000n): StreamPayment {
  return {
    identity: 'team',
    peerId: SELLER,
    price: PRICE,
    maxCostMicro,
    usage: { inputTokens: 1_000, cachedInputTokens: 0, outputTokens },
  };
}

/** A journal left by a killed buyer: each entry an open record, with its progress when given. */
function killedJournal(entries: Record<string, StreamPayment | undefined>): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-close-open-'));
  dirs.push(dir);
  const journal = new RequestRecords(dir);
  for (const [requestId, payment] of Object.entries(entries)) {
    const record = openRecord(requestId);
    if (payment) journal.put({ ...record, usage: payment.usage }, encodeStreamPayment(payment));
    else journal.put(record);
  }
  journal.close();
  return dir;
}

/** Signs whatever it is asked (up to `roomMicro`), recording the journal as it was at signing. */
function latePayments(dir: string, options: { roomMicro?: MicroUsd; failSigning?: boolean } = {}) {
  const calls: Array<{ input: LatePaymentInput; costAtSigning: string | undefined }> = [];
  const payments: BuyerPayments = {
    ...NO_PAYMENTS,
    payLate: async (input) => {
      const amount =
        options.roomMicro !== undefined && input.amountMicro > options.roomMicro
          ? options.roomMicro
          : input.amountMicro;
      input.onCommit(amount);
      // What a buyer killed right now would find: the record is durable before the voucher exists.
      const reader = new RequestRecords(dir);
      calls.push({ input, costAtSigning: reader.get(input.requestId)?.costUsd });
      reader.close();
      if (options.failSigning) throw new Error('signing failed');
      return { amountMicro: amount };
    },
  };
  return { payments, calls };
}

async function restart(dir: string, payments: BuyerPayments) {
  const records = new RequestRecords(dir);
  const logger = silentLogger();
  const warn = vi.spyOn(logger, 'warn');
  const tally = await closeOpenRecords(records, payments, logger);
  return { records, tally, warn };
}

describe('closing the open records of a killed buyer', () => {
  it('a record with nothing delivered closes at 0 and signs nothing', async () => {
    const dir = killedJournal({ bare: undefined, empty: progress(0) });
    const { payments, calls } = latePayments(dir);
    const { records, tally } = await restart(dir, payments);
    expect(calls).toEqual([]);
    for (const id of ['bare', 'empty']) {
      expect(records.get(id)).toMatchObject({ costUsd: '0.000000', errorCode: 'buyer_restarted' });
    }
    expect(tally).toEqual({ closed: 2, paid: 0, paidMicro: 0n });
    expect(records.open()).toEqual([]);
    records.close();
  });

  it('a record with delivered usage is paid at the price, capped, journaled before signing', async () => {
    const dir = killedJournal({ under: progress(10), over: progress(100_000, 5_000n) });
    const { payments, calls } = latePayments(dir);
    const { records, tally } = await restart(dir, payments);
    const byId = Object.fromEntries(calls.map((call) => [call.input.requestId, call]));
    expect(byId.under!.input).toMatchObject({
      identity: 'team',
      peerId: SELLER,
      sellerAddress: `0x${SELLER}`,
      amountMicro: 3_200n,
      usage: { inputTokens: 1_000, outputTokens: 10 },
    });
    expect(byId.under!.costAtSigning).toBe('0.003200');
    expect(byId.over!.input.amountMicro).toBe(5_000n);
    expect(records.get('under')).toMatchObject({
      costUsd: '0.003200',
      errorCode: 'buyer_restarted',
      usage: { outputTokens: 10 },
    });
    expect(records.get('over')).toMatchObject({ costUsd: '0.005000' });
    expect(tally).toEqual({ closed: 2, paid: 2, paidMicro: 8_200n });
    records.close();
    // Closed once: a second restart pays nothing again.
    const again = latePayments(dir);
    const second = await restart(dir, again.payments);
    expect(again.calls).toEqual([]);
    expect(second.tally.closed).toBe(0);
    second.records.close();
  });

  it('records what was signed when the lock leaves less room', async () => {
    const dir = killedJournal({ tight: progress(10) });
    const { payments } = latePayments(dir, { roomMicro: 1_000n });
    const { records } = await restart(dir, payments);
    expect(records.get('tight')).toMatchObject({ costUsd: '0.001000' });
    records.close();
  });

  it('a failure to sign leaves cost 0, logged', async () => {
    const dir = killedJournal({ unsigned: progress(10) });
    const { payments, calls } = latePayments(dir, { failSigning: true });
    const { records, tally, warn } = await restart(dir, payments);
    expect(calls).toHaveLength(1);
    expect(records.get('unsigned')).toMatchObject({
      costUsd: '0.000000',
      errorCode: 'buyer_restarted',
    });
    expect(tally.paid).toBe(0);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ requestId: 'unsigned', owedUsd: '0.003200' }),
      expect.stringContaining('failed'),
    );
    records.close();
  });

  it('without payments (no chain) the delivered part cannot be paid: cost 0, logged', async () => {
    const dir = killedJournal({ owed: progress(10) });
    const { records, warn } = await restart(dir, NO_PAYMENTS);
    expect(records.get('owed')).toMatchObject({ costUsd: '0.000000' });
    expect(warn).toHaveBeenCalledTimes(1);
    records.close();
  });
});
