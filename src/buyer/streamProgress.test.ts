/**
 * A paid stream journals what it delivered, throttled (docs/decisions/154-late-voucher-after-a-crash.md).
 * The buyer's clock is driven by the seller script, so "every 250 ms" is exact, not timed.
 */
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { toPriceMicro } from '../money/index.js';
import type { BuyerPayments } from './payments.js';
import { type RequestRecord, RequestRecords } from './requestRecords.js';
import {
  decodeStreamPayment,
  deliveredCostMicro,
  encodeStreamPayment,
  PROGRESS_EVERY_MS,
  type StreamPayment,
} from './streamProgress.js';
import type { SellerCall } from './testing/memoryNetwork.js';
import { abortableSleep } from './testing/memoryNetwork.js';
import { chatChunk } from './testing/sellerReplies.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const PRICING = { inputUsdPerMillion: 10, outputUsdPerMillion: 20 };

const chunk = chatChunk;

interface Journaled {
  record: RequestRecord;
  progress: StreamPayment | undefined;
}

/** Reads the buyer's journal row of a request, as a restarted buyer would. */
function journaled(dataDir: string, requestId: string): Journaled | undefined {
  const db = new DatabaseSync(join(dataDir, 'requests.sqlite'), { readOnly: true });
  try {
    const row = db.prepare('SELECT record, progress FROM requests WHERE id = ?').get(requestId);
    if (!row) return undefined;
    return {
      record: JSON.parse(String(row.record)) as RequestRecord,
      progress: typeof row.progress === 'string' ? decodeStreamPayment(row.progress) : undefined,
    };
  } finally {
    db.close();
  }
}

/**
 * A paid buyer whose seller streams `words` words, the buyer's clock moving `stepMs` before each;
 * `midway` runs before the last word (the stream still open).
 */
async function paidStream(words: number, stepMs: number, midway?: () => void) {
  let now = 1_000_000;
  const payments: BuyerPayments = {
    prepare: async () => ({ kind: 'test-payment' }),
    complete: async (input) => {
      input.onCommit?.(7n);
      return { amountMicro: 7n };
    },
  };
  t = await startTestBuyer({ payments, clock: () => now });
  const progressWrites: string[] = [];
  const put = t.buyer.service.records.put.bind(t.buyer.service.records);
  t.buyer.service.records.put = (record, progress) => {
    if (progress !== undefined) progressWrites.push(progress);
    put(record, progress);
  };
  t.network.addSeller(
    { peerId: 'seller', services: [{ id: 'm', pricing: PRICING }] },
    (call: SellerCall) => {
      async function* events() {
        yield chunk({ role: 'assistant', content: '' });
        for (let index = 0; index < words; index++) {
          now += stepMs;
          if (index === words - 1) {
            // Let the buyer write what it holds before looking at its journal.
            await abortableSleep(20, call.signal);
            midway?.();
          }
          yield chunk({ content: `word${index} ` });
        }
        yield chunk({}, 'stop');
        yield 'data: [DONE]\n\n';
      }
      return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: events() };
    },
  );
  const response = await fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'm',
      stream: true,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello' }],
    }),
  });
  const text = await response.text();
  return { text, requestId: response.headers.get('x-svc-request-id')!, progressWrites };
}

describe('a paid stream journals its progress', () => {
  it('journals the delivered usage and what pays it, at most every 250 ms, then drops it', async () => {
    let seen: Journaled | undefined;
    const { text, requestId, progressWrites } = await paidStream(10, 100, () => {
      // What a buyer restarted now would read.
      const [open] = t!.buyer.service.records.openWithProgress();
      if (open) seen = { record: open.record, progress: decodeStreamPayment(open.progress ?? '') };
    });
    expect(text).toContain('word9');
    // Open, with the buyer's count of what went out so far and the seller's price and cap.
    expect(seen?.record).toMatchObject({ requestId, completed: false, costUsd: '0.000000' });
    const progress = seen!.progress!;
    expect(progress).toMatchObject({
      identity: 'default',
      peerId: seen!.record.peerId,
      price: toPriceMicro(PRICING),
    });
    expect(progress.maxCostMicro).toBeGreaterThan(0n);
    expect(progress.usage.outputTokens).toBeGreaterThan(0);
    expect(progress.usage.inputTokens).toBeGreaterThan(0);
    expect(seen!.record.usage.outputTokens).toBe(progress.usage.outputTokens);
    // 10 words 100 ms apart: a write at most every 250 ms.
    expect(progressWrites.length).toBeGreaterThan(0);
    expect(progressWrites.length).toBeLessThanOrEqual(Math.ceil(1_000 / PROGRESS_EVERY_MS));
    // Paid and final: the progress is gone, the record carries what was committed.
    await expect.poll(() => journaled(t!.dataDir, requestId)?.record.completed).toBe(true);
    expect(journaled(t!.dataDir, requestId)).toMatchObject({
      record: { costUsd: '0.000007' },
      progress: undefined,
    });
  });

  it('writes nothing for a stream shorter than the interval', async () => {
    const { text, progressWrites } = await paidStream(3, 50);
    expect(text).toContain('word2');
    expect(progressWrites).toEqual([]);
  });
});

describe('what a journaled stream owes', () => {
  const payment: StreamPayment = {
    identity: 'team',
    peerId: 'ab'.repeat(20),
    price: toPriceMicro({
      inputUsdPerMillion: 3,
      outputUsdPerMillion: 20,
      cachedInputUsdPerMillion: 1.5,
    }),
    maxCostMicro: 5_000n,
    usage: { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 10 },
  };

  it('round-trips through the journal and refuses anything else', () => {
    expect(decodeStreamPayment(encodeStreamPayment(payment))).toEqual(payment);
    expect(decodeStreamPayment('{"identity":"x"}')).toBeUndefined();
    expect(decodeStreamPayment('not json')).toBeUndefined();
    const negative = encodeStreamPayment(payment).replace('"5000"', '"-1"');
    expect(decodeStreamPayment(negative)).toBeUndefined();
  });

  it('is the delivered usage at the price, capped, and nothing without output', () => {
    // 1,000 input tokens at $3/M + 10 output tokens at $20/M = 3,200 µUSD.
    expect(deliveredCostMicro(payment)).toBe(3_200n);
    const big = { ...payment, usage: { ...payment.usage, outputTokens: 100_000 } };
    expect(deliveredCostMicro(big)).toBe(5_000n);
    const none = { ...payment, usage: { ...payment.usage, outputTokens: 0 } };
    expect(deliveredCostMicro(none)).toBe(0n);
  });
});

describe('the journal keeps progress with open records only', () => {
  it('reads it back after a restart and drops it with the final record', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'svc-progress-'));
    try {
      const first = new RequestRecords(dir);
      const open: RequestRecord = {
        requestId: 'r1',
        status: 200,
        completed: false,
        streamed: true,
        peerId: payment().peerId,
        provider: null,
        serviceId: 'm',
        model: 'm',
        usage: { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 10 },
        costUsd: '0.000000',
        latencyMs: 1,
        attempts: [],
      };
      first.put(open, encodeStreamPayment(payment()));
      first.put({ ...open, requestId: 'r2' }, encodeStreamPayment(payment()));
      first.put({ ...open, requestId: 'r2', completed: true, costUsd: '0.000004' });
      first.close();
      const second = new RequestRecords(dir);
      const reopened = second.openWithProgress();
      expect(reopened.map((o) => o.record.requestId)).toEqual(['r1']);
      expect(decodeStreamPayment(reopened[0]!.progress!)).toEqual(payment());
      second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  function payment(): StreamPayment {
    return {
      identity: 'default',
      peerId: 'cd'.repeat(20),
      price: toPriceMicro(PRICING),
      maxCostMicro: 1_000n,
      usage: { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 10 },
    };
  }
});
