/** Bad input and faults at service level on a real anvil chain. */
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChainClients,
  DEFAULT_FAUCET_ETH,
  type LocalChain,
  PaymentsContract,
  startLocalChain,
} from '../chain/index.js';
import { isSvcError } from '../errors/index.js';
import { IdentityStore } from '../identity/index.js';
import { silentLogger } from '../log/index.js';
import {
  costOfUsage,
  type TokenPriceMicro,
  type TokenUsage,
  toPriceMicro,
} from '../money/index.js';
import {
  type BuyerPaymentService,
  type ClaimRefusedEvent,
  createBuyerPayments,
  createSellerPayments,
  decodeVoucherReply,
  encodeVoucherMessage,
  type PaymentObject,
  type SellerPaymentService,
  signVoucher,
} from './index.js';
import { manualClock, mirroredSignature, tempDataDir } from './testing.js';

const PRICE: TokenPriceMicro = toPriceMicro({ inputUsdPerMillion: 2, outputUsdPerMillion: 8 });
const USAGE: TokenUsage = { inputTokens: 1000, cachedInputTokens: 0, outputTokens: 500 }; // 6000 micro
const MAX_COST = 20_000n;

let chain: LocalChain;
const cleanups: (() => Promise<void> | void)[] = [];
const clock = manualClock();

beforeAll(async () => {
  chain = await startLocalChain({ gracePeriodSeconds: 600 });
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await chain?.stop();
});

async function setup(
  options: { depositMicro?: bigint; lockUsd?: string; maxUnvoucheredUsd?: string } = {},
) {
  const buyerDir = tempDataDir('buyer');
  const sellerDir = tempDataDir('seller');
  const identities = new IdentityStore(buyerDir.dir, {});
  const buyerAccount = identities.loadDefault().account;
  const sellerAccount = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(buyerAccount.address, {
    ethWei: DEFAULT_FAUCET_ETH,
    usdcMicro: options.depositMicro ?? 1_000_000n,
  });
  await chain.faucet(sellerAccount.address, { ethWei: DEFAULT_FAUCET_ETH });
  const refused: ClaimRefusedEvent[] = [];
  const buyer = createBuyerPayments({
    dataDir: buyerDir.dir,
    identities,
    chain: chain.contract,
    logger: silentLogger(),
    clock,
    config: { channelLockUsd: options.lockUsd ?? '0.10' },
    sweepIntervalMs: 0,
    onClaimRefused: (event) => refused.push(event),
  });
  const seller = createSellerPayments({
    dataDir: sellerDir.dir,
    account: sellerAccount,
    chain: chain.contract,
    logger: silentLogger(),
    clock,
    config: { maxUnvoucheredUsd: options.maxUnvoucheredUsd ?? '0.10' },
    tickIntervalMs: 0,
  });
  await buyer.start();
  await seller.start();
  await buyer.sweeper.sweepOnce();
  cleanups.push(async () => {
    await buyer.stop().catch(() => undefined);
    await seller.stop().catch(() => undefined);
    buyerDir.remove();
    sellerDir.remove();
  });
  return { buyer, seller, buyerAccount, sellerAccount, refused };
}

function prepare(buyer: BuyerPaymentService, sellerAccount: PrivateKeyAccount, requestId?: string) {
  return buyer.prepare({
    identity: 'default',
    peerId: sellerAccount.address.slice(2).toLowerCase(),
    sellerAddress: sellerAccount.address,
    price: PRICE,
    maxCostMicro: MAX_COST,
    requestId,
  }) as Promise<PaymentObject>;
}

async function rejection(promise: Promise<unknown>): Promise<{ code: string; reason: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (isSvcError(error)) return { code: error.code, reason: error.details?.reason };
    throw error;
  }
  throw new Error('expected a rejection');
}

async function serve(
  buyer: BuyerPaymentService,
  seller: SellerPaymentService,
  payment: PaymentObject,
  claimed = USAGE,
  served: { serviceId?: string; units?: boolean } = {},
) {
  const admission = await seller.admit(payment, { price: PRICE }, MAX_COST);
  seller.record(admission.requestId, claimed, costOfUsage(claimed, PRICE));
  const result = await buyer.complete({
    requestId: payment.requestId,
    peerId: 'p',
    claimed: { usage: claimed, costMicroUsd: costOfUsage(claimed, PRICE).toString() },
    estimatedUsage: USAGE,
    price: PRICE,
    ...served,
  });
  if (result.voucher) await seller.receiveVoucher(result.voucher);
  return result;
}

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
          { ...payment, paymentsContract: chain.deployment.usdcAddress },
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
        { chainId: chain.deployment.chainId, paymentsAddress: chain.deployment.paymentsAddress },
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
          { chainId: chain.deployment.chainId, paymentsAddress: chain.deployment.paymentsAddress },
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
    const onChain = await chain.contract.readChannel(channel.channelId);
    expect(onChain.lockedMicro).toBeGreaterThanOrEqual(72_000n);
    expect(seller.channels()[0]).toMatchObject({ voucherMicro: 72_000n, billedMicro: 72_000n });
    await seller.settleAll();
    expect(await chain.contract.usdcBalanceOf(sellerAccount.address)).toBe(72_000n);
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

describe('seller restarts', () => {
  it('a seller that lost its database adopts the open channel from chain and is still paid', async () => {
    const { buyer, seller, sellerAccount } = await setup();
    await serve(buyer, seller, await prepare(buyer, sellerAccount));
    await seller.stop();
    const freshDir = tempDataDir('seller-fresh');
    cleanups.push(() => freshDir.remove());
    const fresh = createSellerPayments({
      dataDir: freshDir.dir,
      account: sellerAccount,
      chain: chain.contract,
      logger: silentLogger(),
      tickIntervalMs: 0,
    });
    await fresh.start();
    cleanups.push(() => fresh.stop().catch(() => undefined));
    const second = await serve(buyer, fresh, await prepare(buyer, sellerAccount));
    expect(second.cumulativeMicro).toBe(12_000n);
    await fresh.settleAll();
    expect(await chain.contract.usdcBalanceOf(sellerAccount.address)).toBe(12_000n);
  });
});

describe('channels closed by the seller', () => {
  it('moves to a new channel after the seller closed the old one', async () => {
    const { buyer, seller, sellerAccount } = await setup();
    await serve(buyer, seller, await prepare(buyer, sellerAccount));
    const first = buyer.channels.list()[0]!.channelId;
    clock.advance(86_401_000);
    await seller.tick();
    expect((await chain.contract.readChannel(first)).status).toBe('closed');
    // The buyer has not noticed yet: the seller refuses, the buyer retires the channel.
    const stale = await prepare(buyer, sellerAccount);
    expect(stale.channelId).toBe(first);
    const refusal = await seller
      .admit(stale, { price: PRICE }, MAX_COST)
      .catch((error: unknown) => error);
    expect(isSvcError(refusal) && refusal.details?.reason).toBe('channel_closed');
    buyer.release(stale.requestId, isSvcError(refusal) ? refusal : undefined);
    const fresh = await prepare(buyer, sellerAccount);
    expect(fresh.channelId).not.toBe(first);
    expect(fresh.reserve).toBeDefined();
    await serve(buyer, seller, fresh);
    // Reconciliation sees the close on chain as well.
    await buyer.channels.reconcile();
    expect(buyer.channels.list().map((row) => row.status)).toEqual(['closed', 'open']);
  });
});

describe('deposits and chain faults', () => {
  it('sweeps wallet USDC into credits on its own while running', async () => {
    const data = tempDataDir('sweep');
    const identities = new IdentityStore(data.dir, {});
    const address = identities.loadDefault().account.address;
    await chain.faucet(address, { ethWei: DEFAULT_FAUCET_ETH });
    const buyer = createBuyerPayments({
      dataDir: data.dir,
      identities,
      chain: chain.contract,
      logger: silentLogger(),
      sweepIntervalMs: 50,
    });
    cleanups.push(async () => {
      await buyer.stop().catch(() => undefined);
      data.remove();
    });
    await buyer.start();
    await chain.faucet(address, { usdcMicro: 123_456n });
    const deadline = Date.now() + 20_000;
    while ((await chain.contract.creditsOf(address)) !== 123_456n && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await chain.contract.creditsOf(address)).toBe(123_456n);
    expect(await chain.contract.usdcBalanceOf(address)).toBe(0n);
  });

  it('reports an unreachable RPC clearly and falls back to a second RPC URL', async () => {
    const dead = 'http://127.0.0.1:9';
    const deadClients = createChainClients({
      network: 'local',
      rpcUrls: [dead],
      chainId: chain.deployment.chainId,
    });
    const deadContract = new PaymentsContract(
      deadClients,
      chain.deployment.paymentsAddress,
      chain.deployment.usdcAddress,
    );
    const data = tempDataDir('dead');
    cleanups.push(() => data.remove());
    const buyer = createBuyerPayments({
      dataDir: data.dir,
      identities: new IdentityStore(data.dir, {}),
      chain: deadContract,
      logger: silentLogger(),
      sweepIntervalMs: 0,
    });
    const sellerAddress = privateKeyToAccount(generatePrivateKey()).address;
    const failure = await rejection(
      buyer.prepare({
        identity: 'default',
        peerId: 'p',
        sellerAddress,
        price: PRICE,
        maxCostMicro: MAX_COST,
      }),
    );
    expect(failure.code).toBe('chain_unavailable');
    await buyer.stop();

    const fallbackClients = createChainClients({
      network: 'local',
      rpcUrls: [dead, chain.rpcUrl],
      chainId: chain.deployment.chainId,
    });
    const viaFallback = new PaymentsContract(
      fallbackClients,
      chain.deployment.paymentsAddress,
      chain.deployment.usdcAddress,
    );
    expect(await viaFallback.gracePeriodSeconds()).toBe(600);
  });
});

describe('a seller that counts more committed than the buyer', () => {
  it('is asked again with a lock grown to its count, and admits the request', async () => {
    const { buyer, seller, sellerAccount } = await setup({ lockUsd: '0.05' });
    // The seller sizes the first request above the buyer's reservation (its own estimate).
    const first = await prepare(buyer, sellerAccount);
    expect(first.reserve?.maxAmount).toBe('50000');
    await seller.admit(first, { price: PRICE }, 45_000n);
    // The buyer counts 20,000 + 20,000 within its 50,000 lock; the seller counts 65,000.
    const second = await prepare(buyer, sellerAccount);
    expect(second.reserve?.maxAmount).toBe('50000');
    const refusal = await seller
      .admit(second, { price: PRICE }, MAX_COST)
      .catch((error: unknown) => error);
    expect(isSvcError(refusal) && refusal.code).toBe('channel_lock_exhausted');
    // What the buyer reads from the seller's error body.
    const details = isSvcError(refusal) ? refusal.details : undefined;
    expect(details?.committedMicro).toBe('45000');
    buyer.release(second.requestId, {
      code: 'channel_lock_exhausted',
      ...(details ? { details } : {}),
    });
    const again = await prepare(buyer, sellerAccount, second.requestId);
    // max(buyer's 20,000, seller's 45,000) + 20,000 for this request.
    expect(BigInt(again.reserve?.maxAmount ?? '0')).toBeGreaterThanOrEqual(65_000n);
    const admitted = await seller.admit(again, { price: PRICE }, MAX_COST);
    expect(admitted.requestId).toBe(second.requestId);
  }, 60_000);

  it("believes a seller's count only up to one lock beyond its own", async () => {
    const { buyer, seller, sellerAccount } = await setup({ lockUsd: '0.05' });
    const first = await prepare(buyer, sellerAccount);
    await seller.admit(first, { price: PRICE }, 45_000n);
    const second = await prepare(buyer, sellerAccount);
    // A seller that claims a huge committed amount to lock up the buyer's credits.
    buyer.release(second.requestId, {
      code: 'channel_lock_exhausted',
      details: { committedMicro: '900000000000' },
    });
    const again = await prepare(buyer, sellerAccount, second.requestId);
    // Believed: own 20,000 + one lock of 50,000; + 20,000 for this request = 90,000, which the
    // lock reaches in one step of the default lock (50,000 + 50,000): never the claim.
    expect(again.reserve?.maxAmount).toBe('100000');
  }, 60_000);
});
