/**
 * The top-up exchange on anvil with the real TestUSDC, the real local facilitator over HTTP and
 * payments signed by the official x402 client: rules, the challenge, paying, and bad payments
 * refused before the facilitator is called.
 */
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUsd } from '../money/index.js';
import { MemoryTopupLedger } from './ledger/MemoryTopupLedger.js';
import { challenge, challengeOf, codeOf, counting, TOPUP_URL } from './testing/topupAssertions.js';
import {
  craftedPayment,
  officialPayment,
  paymentHeader,
  startTopupHarness,
  type TopupHarness,
} from './testing/topupHarness.js';
import type { TopupKey } from './types.js';

const URL_ = TOPUP_URL;
let h: TopupHarness;

beforeAll(async () => {
  h = await startTopupHarness();
});
afterAll(async () => {
  await h?.stop();
});

describe('challenge and rules', () => {
  it('answers 402 with an x402 v2 PAYMENT-REQUIRED for the key wallet', async () => {
    const { service } = h.service();
    const key = h.newKey();
    const reply = await service.handle({ key, body: { amount_usd: '5' }, resourceUrl: URL_ });
    expect(reply.status).toBe(402);
    expect(reply.headers['cache-control']).toBe('no-store');
    const required = challengeOf(reply);
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(URL_);
    expect(required.accepts).toEqual([
      {
        scheme: 'exact',
        network: `eip155:${h.chain.anvil.chainId}`,
        amount: '5000000',
        asset: getAddress(h.asset.address),
        payTo: getAddress(key.walletAddress),
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
    ]);
  });

  it('refuses keys paid from the default wallet (403 topup_not_available)', async () => {
    const { service } = h.service();
    const reply = await service.handle({
      key: h.newKey({ identity: 'default', ownWallet: false }),
      body: { amount_usd: '5' },
      resourceUrl: URL_,
    });
    expect(reply.status).toBe(403);
    expect(codeOf(reply).code).toBe('topup_not_available');
  });

  it('refuses keys without top-ups enabled (403 topup_not_allowed)', async () => {
    const { service } = h.service();
    const reply = await service.handle({
      key: h.newKey({ topupEnabled: false }),
      body: { amount_usd: '5' },
      resourceUrl: URL_,
    });
    expect(reply.status).toBe(403);
    expect(codeOf(reply).code).toBe('topup_not_allowed');
  });

  it.each([['1.999999'], ['500.000001'], ['abc'], ['-5'], ['2.0000001'], [undefined]])(
    'refuses amount %s with 400 naming the bounds',
    async (amount) => {
      const { service } = h.service();
      const body = amount === undefined ? {} : { amount_usd: amount };
      const reply = await service.handle({ key: h.newKey(), body, resourceUrl: URL_ });
      expect(reply.status).toBe(400);
      const error = codeOf(reply);
      expect(error.code).toBe('topup_amount_invalid');
      expect(error.message).toContain('2.000000');
      expect(error.message).toContain('500.000000');
    },
  );

  it('accepts both bounds exactly', async () => {
    const { service } = h.service();
    for (const amount of ['2', '500']) {
      const reply = await service.handle({
        key: h.newKey(),
        body: { amount_usd: amount },
        resourceUrl: URL_,
      });
      expect(reply.status).toBe(402);
    }
  });
});

describe('paying', () => {
  it('settles a payment signed by the official client, credits exactly once, refuses a replay', async () => {
    const { service, ledger } = h.service();
    const key = h.newKey();
    const payer = await h.newPayer('20');
    const required = await challenge(service, key, '5');
    const header = paymentHeader(await officialPayment(payer, required));

    const reply = await service.handle({
      key,
      body: { amount_usd: '5' },
      paymentSignature: header,
      resourceUrl: URL_,
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const settle = decodePaymentResponseHeader(reply.headers['PAYMENT-RESPONSE']!);
    expect(settle.success).toBe(true);
    expect(settle.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(settle.network).toBe(`eip155:${h.chain.anvil.chainId}`);
    const receipt = await h.chain.clients.publicClient.getTransactionReceipt({
      hash: settle.transaction as `0x${string}`,
    });
    expect(receipt.status).toBe('success');
    expect(await h.usdcBalance(key.walletAddress)).toBe(parseUsd('5'));
    expect(await h.usdcBalance(payer.address)).toBe(parseUsd('15'));
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(parseUsd('5'));
    expect((reply.body as { data: { topped_up_usd: string } }).data.topped_up_usd).toBe('5.000000');

    const replay = await service.handle({
      key,
      body: { amount_usd: '5' },
      paymentSignature: header,
      resourceUrl: URL_,
    });
    expect(replay.status).toBe(409);
    expect(codeOf(replay).code).toBe('topup_payment_replayed');
    expect(await h.usdcBalance(key.walletAddress)).toBe(parseUsd('5'));
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(parseUsd('5'));
  });

  it('refuses a replay on a fresh service sharing the ledger (process restart)', async () => {
    const ledger = new MemoryTopupLedger();
    const first = h.service({ ledger }).service;
    const key = h.newKey();
    const payer = await h.newPayer('10');
    const header = paymentHeader(await officialPayment(payer, await challenge(first, key, '3')));
    expect(
      (
        await first.handle({
          key,
          body: { amount_usd: '3' },
          paymentSignature: header,
          resourceUrl: URL_,
        })
      ).status,
    ).toBe(200);
    const second = h.service({ ledger }).service;
    const replay = await second.handle({
      key,
      body: { amount_usd: '3' },
      paymentSignature: header,
      resourceUrl: URL_,
    });
    expect(replay.status).toBe(409);
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(parseUsd('3'));
  });
});

describe('bad payments are refused before the facilitator', () => {
  const cases: Array<{
    name: string;
    reason: string;
    make: (ctx: {
      key: TopupKey;
      required: PaymentRequired;
      payer: ReturnType<typeof privateKeyToAccount>;
    }) => Promise<string>;
    bodyAmount?: string;
  }> = [
    {
      name: 'an expired authorization',
      reason: 'authorization_expired',
      make: async ({ required, payer }) =>
        paymentHeader(
          await craftedPayment(payer, required.accepts[0]!, {
            validBefore: BigInt(Math.floor(Date.now() / 1000) - 60),
          }),
        ),
    },
    {
      name: 'validAfter in the future',
      reason: 'authorization_not_yet_valid',
      make: async ({ required, payer }) =>
        paymentHeader(
          await craftedPayment(payer, required.accepts[0]!, {
            validAfter: BigInt(Math.floor(Date.now() / 1000) + 3600),
          }),
        ),
    },
    {
      name: 'an authorization valid for a year',
      reason: 'authorization_too_long',
      make: async ({ required, payer }) =>
        paymentHeader(
          await craftedPayment(payer, required.accepts[0]!, {
            validBefore: BigInt(Math.floor(Date.now() / 1000) + 365 * 86400),
          }),
        ),
    },
    {
      name: 'a wrong payee',
      reason: 'payee_mismatch',
      make: async ({ required, payer }) =>
        paymentHeader(
          await craftedPayment(payer, required.accepts[0]!, {
            to: privateKeyToAccount(generatePrivateKey()).address,
          }),
        ),
    },
    {
      name: 'a wrong asset',
      reason: 'asset_mismatch',
      make: async ({ required, payer }) => {
        const other = {
          ...required.accepts[0]!,
          asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        };
        return paymentHeader(await craftedPayment(payer, other));
      },
    },
    {
      name: 'a wrong network',
      reason: 'network_mismatch',
      make: async ({ required, payer }) => {
        const other = { ...required.accepts[0]!, network: 'eip155:8453' as const };
        return paymentHeader(await craftedPayment(payer, other));
      },
    },
    {
      name: 'an amount that differs from the request',
      reason: 'amount_mismatch',
      bodyAmount: '4',
      make: async ({ required, payer }) => paymentHeader(await officialPayment(payer, required)),
    },
    {
      name: 'a signature by someone else',
      reason: 'invalid_signature',
      make: async ({ required, payer }) => {
        const forged = await craftedPayment(
          privateKeyToAccount(generatePrivateKey()),
          required.accepts[0]!,
        );
        const auth = (forged.payload as { authorization: Record<string, string> }).authorization;
        auth.from = payer.address;
        return paymentHeader(forged);
      },
    },
    {
      name: 'a signature for another chain',
      reason: 'invalid_signature',
      make: async ({ required, payer }) =>
        paymentHeader(await craftedPayment(payer, required.accepts[0]!, {}, { chainId: 8453 })),
    },
    {
      name: 'a garbage header',
      reason: 'invalid_payment_header',
      make: async () => 'this is not base64 JSON!',
    },
    {
      name: 'base64 JSON that is not a payment',
      reason: 'invalid_payment_header',
      make: async () => Buffer.from('{"hello":"world"}').toString('base64'),
    },
  ];

  it.each(cases)('$name → 402 $reason, nothing credited', async ({ reason, make, bodyAmount }) => {
    const { client, calls } = counting(h.facilitatorClient);
    const { service, ledger } = h.service({ facilitator: client });
    const key = h.newKey();
    const payer = await h.newPayer('10');
    const required = await challenge(service, key, '5');
    const header = await make({ key, required, payer });
    const reply = await service.handle({
      key,
      body: { amount_usd: bodyAmount ?? '5' },
      paymentSignature: header,
      resourceUrl: URL_,
    });
    expect(reply.status).toBe(402);
    expect(codeOf(reply).code).toBe('topup_payment_invalid');
    expect(codeOf(reply).reason).toBe(reason);
    expect(challengeOf(reply).error).toBe(reason);
    expect(calls).toEqual([]);
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);
    expect(await h.usdcBalance(key.walletAddress)).toBe(0n);
  });

  it('insufficient funds → 402 insufficient_funds, nothing credited', async () => {
    const { client, calls } = counting(h.facilitatorClient);
    const { service, ledger } = h.service({ facilitator: client });
    const key = h.newKey();
    const payer = await h.newPayer('1');
    const header = paymentHeader(await officialPayment(payer, await challenge(service, key, '5')));
    const reply = await service.handle({
      key,
      body: { amount_usd: '5' },
      paymentSignature: header,
      resourceUrl: URL_,
    });
    expect(reply.status).toBe(402);
    expect(codeOf(reply).reason).toBe('insufficient_funds');
    expect(calls).toEqual([]);
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);
  });
});
