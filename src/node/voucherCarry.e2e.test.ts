/**
 * Vouchers carried by the next request (decision 161): back-to-back paid requests pay in band,
 * and the last voucher still reaches the seller on its own after the carry wait.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SellerPaymentService } from '../payments/index.js';
import { CARRY_WAIT_MS } from '../payments/wiring/voucherPayments.js';
import { type FakeUpstream, startFakeUpstream } from '../seller/testing/index.js';
import { waitFor } from '../testing/index.js';
import { PaidNetwork, PER_REQUEST, TEXT, USAGE } from './testing/paidFixture.js';

describe('vouchers ride on the next request', () => {
  let net: PaidNetwork;
  let upstream: FakeUpstream;
  let payments: SellerPaymentService;
  /** Voucher messages the seller received on /svc/voucher/1. */
  let voucherStreams = 0;

  beforeAll(async () => {
    net = await PaidNetwork.start();
    await net.fundBuyer(5_000_000n);
    upstream = await startFakeUpstream({ text: TEXT, usage: USAGE });
    const seller = await net.startSeller(await net.sellerOptions(upstream));
    payments = seller.payments!;
    const received = payments.handleVoucherBytes.bind(payments);
    payments.handleVoucherBytes = (bytes) => {
      voucherStreams++;
      return received(bytes);
    };
  }, 180_000);

  afterAll(async () => {
    await net?.stop();
    await upstream?.close();
  });

  const ask = async () => {
    const response = await fetch(`${net.buyer.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-paid', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    await response.text();
  };

  it('pays back-to-back requests in band and sends only the last voucher on its own', async () => {
    const started = Date.now();
    for (let i = 0; i < 5; i++) await ask();
    // Each request carried the voucher of the one before: the seller holds four in band.
    expect(payments.channels()[0]?.voucherMicro).toBe(4n * PER_REQUEST);
    if (Date.now() - started < CARRY_WAIT_MS) expect(voucherStreams).toBe(0);
    // The fifth has no next request: it goes on /svc/voucher/1 once the carry wait is over.
    await waitFor(
      () => payments.channels()[0]?.voucherMicro === 5n * PER_REQUEST,
      10_000,
      'the last voucher on its own',
    );
    expect(voucherStreams).toBeLessThanOrEqual(2);
    expect(voucherStreams).toBeGreaterThanOrEqual(1);
  });
});
