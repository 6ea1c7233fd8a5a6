/** Forged, replayed and over-claimed payments, and concurrency, at service level on a real anvil chain. */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { costOfUsage, type TokenUsage, toPriceMicro } from '../money/index.js';
import { decodeVoucherReply, encodeVoucherMessage, signVoucher } from './index.js';
import {
  MAX_COST,
  PRICE,
  paymentsOnChain,
  prepare,
  rejection,
  serve,
  USAGE,
} from './testing/faultsFixture.js';
import { mirroredSignature } from './testing.js';

const { chain, setup } = paymentsOnChain();

describe('seller refuses forged and replayed payments', () => {
  it('rejects payments bound to another chain, contract or channel, and forged reserves and vouchers', async () => {
    const { buyer, seller, buyerAccount, sellerAccount } = await setup();
    const payment = await prepare(buyer, sellerAccount);
    const other = privateKeyToAccount(generatePrivateKey());
    expect(await rejection(seller.admit(undefined, { price: PRICE }, MAX_COST))).toEqual({
      code: 'payment_invalid',
      reason: 'missing',
    });
    expect(await rejection(seller.admit({ ...payment, v: 2 }, { price: PRICE }, MAX_COST))).toEqual(
      { code: 'payment_invalid', reason: 'malformed' },
    );
    expect(
      await rejection(seller.admit({ ...payment, chainId: 1 }, { price: PRICE }, MAX_COST)),
    ).toMatchObject({ reason: 'wrong_chain' });
    expect(
      await rejection(
        seller.admit(
          { ...payment, paymentsContract: chain().deployment.usdcAddress },
          { price: PRICE },
          MAX_COST,
        ),
      ),
    ).toMatchObject({ reason: 'wrong_chain' });
    expect(
      await rejection(
        seller.admit({ ...payment, salt: `0x${'11'.repeat(32)}` }, { price: PRICE }, MAX_COST),
      ),
    ).toMatchObject({ reason: 'wrong_channel' });
    const forgedReserve = { ...payment.reserve!, maxAmount: '999999' };
    expect(
      await rejection(
        seller.admit({ ...payment, reserve: forgedReserve }, { price: PRICE }, MAX_COST),
      ),
    ).toMatchObject({
      reason: 'bad_reserve',
    });
    // A free offer is admitted without any payment.
    expect(
      await seller.admit(
        undefined,
        { price: toPriceMicro({ inputUsdPerMillion: 0, outputUsdPerMillion: 0 }) },
        0n,
      ),
    ).toMatchObject({ free: true });

    const first = await serve(buyer, seller, payment);
    expect(first.cumulativeMicro).toBe(6000n);
    const next = await prepare(buyer, sellerAccount);
    const forgedVoucher = {
      cumulativeAmount: '50000',
      signature: await signVoucher(
        other,
        {
          chainId: chain().deployment.chainId,
          paymentsAddress: chain().deployment.paymentsAddress,
        },
        { channelId: next.channelId, cumulativeAmount: 50_000n },
      ),
    };
    expect(
      await rejection(
        seller.admit({ ...next, voucher: forgedVoucher }, { price: PRICE }, MAX_COST),
      ),
    ).toMatchObject({
      reason: 'bad_voucher',
    });
    // The buyer's own signature with a high s: viem recovers the buyer from it, the contract
    // would refuse it when the seller closes, so the seller refuses it now.
    const highS = {
      cumulativeAmount: '6500',
      signature: mirroredSignature(
        await signVoucher(
          buyerAccount,
          {
            chainId: chain().deployment.chainId,
            paymentsAddress: chain().deployment.paymentsAddress,
          },
          { channelId: next.channelId, cumulativeAmount: 6_500n },
        ),
      ),
    };
    expect(
      await rejection(seller.admit({ ...next, voucher: highS }, { price: PRICE }, MAX_COST)),
    ).toMatchObject({ reason: 'bad_voucher' });
    // Replaying the first voucher message changes nothing; a tampered amount is refused.
    const replay = decodeVoucherReply(
      await seller.handleVoucherBytes(encodeVoucherMessage(first.voucher!)),
    );
    expect(replay.ok).toBe(true);
    const tampered = decodeVoucherReply(
      await seller.handleVoucherBytes(
        encodeVoucherMessage({ ...first.voucher!, cumulativeAmount: '7000' }),
      ),
    );
    expect(tampered).toMatchObject({ ok: false });
    const garbage = decodeVoucherReply(
      await seller.handleVoucherBytes(new TextEncoder().encode('{"v":1}')),
    );
    expect(garbage.ok).toBe(false);
    expect(seller.channels()[0]).toMatchObject({ voucherMicro: 6000n });
    buyer.release(next.requestId);
  });
});

describe('claims, stalled buyers and concurrency', () => {
  it("widens the tolerance by the model's tokenizer family, and counts units exactly", async () => {
    const { buyer, seller, sellerAccount, refused } = await setup();
    // 30 % more tokens than the buyer's o200k count: normal for a Claude tokenizer, not for GPT.
    const more: TokenUsage = { inputTokens: 1300, cachedInputTokens: 0, outputTokens: 650 };
    const claude = await serve(buyer, seller, await prepare(buyer, sellerAccount), more, {
      serviceId: 'claude-sonnet-4-5',
    });
    expect(claude.claim).toMatchObject({ accepted: true });
    expect(claude.amountMicro).toBe(costOfUsage(more, PRICE));
    const gpt = await serve(buyer, seller, await prepare(buyer, sellerAccount), more, {
      serviceId: 'gpt-4o',
    });
    expect(gpt.claim).toMatchObject({ accepted: false, reason: 'tokens_over_estimate' });
    // Units (images, video) are billed as 1,000 tokens each: one more than delivered is refused.
    const oneMore: TokenUsage = { ...USAGE, outputTokens: USAGE.outputTokens + 1 };
    const units = await serve(buyer, seller, await prepare(buyer, sellerAccount), oneMore, {
      units: true,
    });
    expect(units.claim).toMatchObject({ accepted: false, reason: 'tokens_over_estimate' });
    expect(refused).toHaveLength(2);
  });

  it('pays only its own count when a seller over-claims, and reports the seller', async () => {
    const { buyer, seller, sellerAccount, refused } = await setup();
    const payment = await prepare(buyer, sellerAccount);
    const inflated: TokenUsage = { inputTokens: 1000, cachedInputTokens: 0, outputTokens: 1500 };
    const result = await serve(buyer, seller, payment, inflated);
    expect(result.claim).toMatchObject({ accepted: false, reason: 'tokens_over_estimate' });
    expect(result.amountMicro).toBe(costOfUsage(USAGE, PRICE));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      reason: 'tokens_over_estimate',
      claimedMicro: 14_000n,
      estimatedMicro: 6000n,
    });
  });

  it('stops serving a buyer that stops signing', async () => {
    const { buyer, seller, sellerAccount } = await setup({ maxUnvoucheredUsd: '0.01' });
    // The buyer never completes (no vouchers), so the seller's unpaid total grows.
    for (let index = 0; index < 2; index++) {
      const payment = await prepare(buyer, sellerAccount);
      const admission = await seller.admit(payment, { price: PRICE }, MAX_COST);
      seller.record(admission.requestId, USAGE, costOfUsage(USAGE, PRICE));
    }
    const payment = await prepare(buyer, sellerAccount);
    expect(await rejection(seller.admit(payment, { price: PRICE }, MAX_COST))).toEqual({
      code: 'payment_invalid',
      reason: 'unpaid',
    });
  });

  it('keeps vouchers strictly increasing and within the lock under concurrent requests, topping up as needed', async () => {
    const { buyer, seller, sellerAccount } = await setup({ lockUsd: '0.03' });
    const results = await Promise.all(
      Array.from({ length: 12 }, async () =>
        serve(buyer, seller, await prepare(buyer, sellerAccount)),
      ),
    );
    const cumulative = results
      .map((result) => result.cumulativeMicro)
      .sort((a, b) => (a < b ? -1 : 1));
    expect(new Set(cumulative).size).toBe(12);
    expect(cumulative.at(-1)).toBe(12n * 6000n);
    const channel = buyer.channels.list()[0]!;
    const onChain = await chain().contract.readChannel(channel.channelId);
    expect(onChain.lockedMicro).toBeGreaterThanOrEqual(72_000n);
    expect(seller.channels()[0]).toMatchObject({ voucherMicro: 72_000n, billedMicro: 72_000n });
    await seller.settleAll();
    expect(await chain().contract.usdcBalanceOf(sellerAccount.address)).toBe(72_000n);
  });

  it('never lets concurrent requests commit more than the lock at the seller', async () => {
    const { buyer, seller, sellerAccount } = await setup();
    const payment = await prepare(buyer, sellerAccount);
    await seller.admit(payment, { price: PRICE }, MAX_COST);
    // A misbehaving buyer reuses its payment object for a request above the remaining lock.
    expect(
      await rejection(
        seller.admit(
          { ...payment, requestId: 'x2', maxCostMicro: '95000' },
          { price: PRICE },
          95_000n,
        ),
      ),
    ).toMatchObject({ code: 'channel_lock_exhausted' });
    buyer.release(payment.requestId);
  });
});
