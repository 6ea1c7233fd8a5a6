import { describe, expect, it } from 'vitest';
import { isSvcError } from '../errors/index.js';
import {
  decodeVoucherMessage,
  decodeVoucherReply,
  encodeVoucherMessage,
  encodeVoucherReply,
  parsePaymentObject,
  type VoucherMessage,
} from './wire.js';

const voucher: VoucherMessage = {
  v: 1,
  channelId: `0x${'ab'.repeat(32)}`,
  requestId: 'req-1',
  amountMicro: '1500',
  cumulativeAmount: '9000',
  signature: `0x${'cd'.repeat(65)}`,
};

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isSvcError(error) ? `${error.code}:${String(error.details?.reason)}` : 'other';
  }
  return undefined;
}

describe('payment wire messages', () => {
  it('round-trips a voucher message and a reply through bytes', () => {
    expect(decodeVoucherMessage(encodeVoucherMessage(voucher))).toEqual(voucher);
    expect(decodeVoucherReply(encodeVoucherReply({ v: 1, ok: false, error: 'x' }))).toEqual({
      v: 1,
      ok: false,
      error: 'x',
    });
  });

  it('rejects malformed, oversized and non-JSON voucher bytes as payment_invalid', () => {
    expect(code(() => decodeVoucherMessage(new TextEncoder().encode('nope')))).toBe(
      'payment_invalid:malformed',
    );
    expect(
      code(() =>
        decodeVoucherMessage(encodeVoucherMessage({ ...voucher, cumulativeAmount: '-1' })),
      ),
    ).toBe('payment_invalid:malformed');
    expect(code(() => decodeVoucherMessage(new Uint8Array(5000)))).toBe(
      'payment_invalid:malformed',
    );
    expect(
      code(() =>
        decodeVoucherMessage(encodeVoucherMessage({ ...voucher, extra: 1 } as VoucherMessage)),
      ),
    ).toBe('payment_invalid:malformed');
  });

  it('validates the payment object strictly', () => {
    const payment = {
      v: 1,
      chainId: 31337,
      paymentsContract: `0x${'11'.repeat(20)}`,
      buyer: `0x${'22'.repeat(20)}`,
      channelId: `0x${'33'.repeat(32)}`,
      salt: `0x${'44'.repeat(32)}`,
      requestId: 'r',
      maxCostMicro: '100',
    };
    expect(parsePaymentObject(payment)).toEqual(payment);
    expect(code(() => parsePaymentObject({ ...payment, maxCostMicro: 1.5 }))).toBe(
      'payment_invalid:malformed',
    );
    expect(
      code(() =>
        parsePaymentObject({ ...payment, voucher: { cumulativeAmount: '1', signature: '0x12' } }),
      ),
    ).toBe('payment_invalid:malformed');
  });
});
