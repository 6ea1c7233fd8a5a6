/**
 * Hostile records from strangers: signed peer metadata, vouchers and payment objects, and x402
 * PAYMENT-SIGNATURE headers. Whatever the bytes, the reader answers with a stated refusal (a
 * rejection reason, or an SvcError code from the error table), never throws anything else, and
 * a refused voucher leaves the seller's channels unchanged.
 */
import fc from 'fast-check';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, isSvcError } from '../../src/errors/index.js';
import { silentLogger } from '../../src/log/index.js';
import {
  MAX_METADATA_BYTES,
  type MetadataRejection,
  signMetadata,
  verifyMetadata,
} from '../../src/network/metadata/index.js';
import { createSellerPayments } from '../../src/payments/factories.js';
import type { SellerPaymentService } from '../../src/payments/seller/SellerPaymentService.js';
import { tempDataDir } from '../../src/payments/testing.js';
import {
  decodeVoucherMessage,
  decodeVoucherReply,
  MAX_VOUCHER_MESSAGE_BYTES,
  parsePaymentObject,
} from '../../src/payments/wire.js';
import { decodePayment } from '../../src/x402/index.js';

const REASONS: MetadataRejection[] = [
  'too_large',
  'invalid_json',
  'unknown_version',
  'invalid_record',
  'stale',
  'future',
  'bad_signature',
  'wrong_peer',
];
const encoder = new TextEncoder();
const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** Hostile byte strings every reader gets. */
const hostileBytes = (maxBytes: number): Uint8Array[] => [
  encoder.encode('{"v":1,'),
  encoder.encode('[]'),
  encoder.encode('null'),
  encoder.encode('"text"'),
  encoder.encode(deep(Math.floor(maxBytes / 2) - 1)),
  encoder.encode(
    `[${Array(Math.floor(maxBytes / 2) - 1)
      .fill('0')
      .join(',')}]`.slice(0, maxBytes),
  ),
  Uint8Array.of(0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d),
  new Uint8Array(maxBytes + 1).fill(0x20),
  encoder.encode('x'.repeat(maxBytes)),
];

/** The SvcError code `fn` throws (and that it throws one). */
function codeThrown(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isSvcError(error)) return error.code;
    throw error;
  }
  throw new Error('accepted a hostile record');
}

describe('signed metadata records', () => {
  it('refuses hostile bytes with a stated reason, never by throwing', async () => {
    for (const bytes of hostileBytes(MAX_METADATA_BYTES)) {
      const verdict = await verifyMetadata(bytes);
      expect(verdict.ok).toBe(false);
      if (!verdict.ok) expect(REASONS).toContain(verdict.reason);
    }
  });

  it('refuses any byte string or JSON value (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 512 }),
          fc.json({ maxDepth: 6 }).map((text) => encoder.encode(text)),
        ),
        async (bytes) => {
          const verdict = await verifyMetadata(bytes);
          expect(verdict.ok).toBe(false);
          if (!verdict.ok) expect(REASONS).toContain(verdict.reason);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a validly signed record whose fields are hostile', async () => {
    const account = privateKeyToAccount(`0x${'11'.repeat(32)}`);
    const peerId = account.address.slice(2).toLowerCase();
    const base = {
      capabilities: { uploadLimitBytes: 1024 },
      peerId,
      version: 1 as const,
      displayName: 'x',
      providers: [],
      timestamp: Date.now(),
    };
    const verdictOf = async (fields: Record<string, unknown>) => {
      const signed = await signMetadata(
        { ...base, ...fields } as unknown as Parameters<typeof signMetadata>[0],
        account,
      );
      return verifyMetadata(encoder.encode(JSON.stringify(signed)));
    };
    // The same record with ordinary fields is accepted: the refusals below are the fields'.
    expect((await verdictOf({ displayName: 'An ordinary seller' })).ok).toBe(true);
    const reasons: string[] = [];
    for (const fields of [
      { displayName: 'n'.repeat(10_240) },
      { displayName: '../\u0000' },
      { displayName: 'seller\u001b[2J\u001b]0;pwned\u0007' },
      { region: 'eu\u0000' },
      {
        providers: Array.from({ length: 2_000 }, (_, i) => ({
          provider: `p${i}`,
          services: [],
          defaultPricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 1 },
          maxConcurrency: 1,
          currentLoad: 0,
        })),
      },
    ]) {
      const verdict = await verdictOf(fields);
      reasons.push(verdict.ok ? 'accepted' : verdict.reason);
    }
    expect(reasons).toEqual([
      'invalid_record',
      'invalid_record',
      'invalid_record',
      'invalid_record',
      'too_large',
    ]);
  });
});

describe('vouchers and payment messages', () => {
  let seller: SellerPaymentService;
  const dir = tempDataDir('svc-hostile-vouchers-');

  beforeAll(() => {
    seller = createSellerPayments({
      dataDir: dir.dir,
      account: privateKeyToAccount(`0x${'22'.repeat(32)}`),
      // Never called: every message here is refused before the chain would be asked.
      chain: {
        chainId: 31_337,
        paymentsAddress: `0x${'33'.repeat(20)}`,
      } as unknown as Parameters<typeof createSellerPayments>[0]['chain'],
      logger: silentLogger(),
      tickIntervalMs: 0,
    });
  });

  afterAll(() => {
    dir.remove();
  });

  it('voucher messages: hostile bytes are payment_invalid and change no channel', async () => {
    for (const bytes of hostileBytes(MAX_VOUCHER_MESSAGE_BYTES)) {
      expect(codeThrown(() => decodeVoucherMessage(bytes))).toBe('payment_invalid');
      const reply = decodeVoucherReply(await seller.handleVoucherBytes(bytes));
      expect(reply.ok).toBe(false);
    }
    expect(seller.channels()).toEqual([]);
  });

  it('voucher messages and replies: any bytes are refused with payment_invalid (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 600 }), async (bytes) => {
        expect(codeThrown(() => decodeVoucherMessage(bytes))).toBe('payment_invalid');
        expect(codeThrown(() => decodeVoucherReply(bytes))).toBe('payment_invalid');
        expect(decodeVoucherReply(await seller.handleVoucherBytes(bytes)).ok).toBe(false);
      }),
      { numRuns: 200 },
    );
    expect(seller.channels()).toEqual([]);
  });

  it('payment objects in request heads: any JSON value, deep nesting, odd strings are payment_invalid', () => {
    const hostile: unknown[] = [
      null,
      [],
      'x'.repeat(100_000),
      JSON.parse(deep(30_000)),
      { v: 1, requestId: '../\u0000', channelId: 'x'.repeat(10_240) },
      { v: 1, maxCostMicro: '-1' },
      { v: 1, maxCostMicro: '9'.repeat(40) },
    ];
    for (const value of hostile)
      expect(codeThrown(() => parsePaymentObject(value))).toBe('payment_invalid');
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        expect(codeThrown(() => parsePaymentObject(value))).toBe('payment_invalid');
      }),
      { numRuns: 300 },
    );
  });
});

describe('x402 PAYMENT-SIGNATURE headers', () => {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  /** The SvcError decoding `header` throws (undefined when it was accepted). */
  const refusalOf = (header: string) => {
    try {
      decodePayment(header);
    } catch (error) {
      if (isSvcError(error)) return error;
      throw error;
    }
    return undefined;
  };

  it('hostile headers are 402 topup_payment_invalid with a reason', () => {
    const headers = [
      '',
      'not base64 at all!!',
      b64('{"x402Version":2,'),
      b64('[]'),
      b64(deep(50_000)),
      b64(`{"x402Version":2,"accepted":${deep(10_000)}}`),
      Buffer.from([0xff, 0xfe, 0x00]).toString('base64'),
      b64(JSON.stringify({ x402Version: 2, accepted: { scheme: '../\u0000' }, payload: {} })),
      'A'.repeat(1024 * 1024),
    ];
    for (const header of headers) {
      const refusal = refusalOf(header);
      expect(refusal?.code).toBe('topup_payment_invalid');
      expect(typeof refusal?.details?.reason).toBe('string');
    }
    expect(ERROR_CODES.topup_payment_invalid.status).toBe(402);
  });

  it('any header string is refused with topup_payment_invalid (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.json({ maxDepth: 5 }).map(b64),
          fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('base64')),
        ),
        (header) => {
          expect(refusalOf(header)?.code).toBe('topup_payment_invalid');
        },
      ),
      { numRuns: 300 },
    );
  });
});
