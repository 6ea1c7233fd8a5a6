/**
 * The headline scenario on a real anvil chain, at service level: a buyer service and seller
 * services talking through function calls and encoded wire messages.
 */
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAUCET_ETH, type LocalChain, startLocalChain } from '../chain/index.js';
import { isSvcError, type SvcError } from '../errors/index.js';
import { IdentityStore } from '../identity/index.js';
import { silentLogger } from '../log/index.js';
import {
  costOfUsage,
  maxCostOfRequest,
  type TokenPriceMicro,
  type TokenUsage,
  toPriceMicro,
} from '../money/index.js';
import {
  type BuyerPaymentService,
  createBuyerPayments,
  createSellerPayments,
  deliverVoucher,
  ReputationReader,
  type SellerPaymentService,
} from './index.js';
import { manualClock, tempDataDir } from './testing.js';

const PRICE: TokenPriceMicro = toPriceMicro({
  inputUsdPerMillion: 1.5,
  outputUsdPerMillion: 6,
  cachedInputUsdPerMillion: 0.75,
});
const GRACE_SECONDS = 600;

let chain: LocalChain;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  chain = await startLocalChain({ gracePeriodSeconds: GRACE_SECONDS });
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await chain?.stop();
});

interface SellerHandle {
  account: PrivateKeyAccount;
  dataDir: string;
  service: SellerPaymentService;
}

const clock = manualClock();

async function newBuyer(options: { lockUsd?: string } = {}) {
  const data = tempDataDir('buyer');
  const identities = new IdentityStore(data.dir, {});
  const address = identities.loadDefault().account.address;
  await chain.faucet(address, { ethWei: DEFAULT_FAUCET_ETH });
  const buyer = createBuyerPayments({
    dataDir: data.dir,
    identities,
    chain: chain.contract,
    logger: silentLogger(),
    clock,
    config: { channelLockUsd: options.lockUsd ?? '0.05' },
    sweepIntervalMs: 0,
  });
  await buyer.start();
  cleanups.push(async () => {
    await buyer.stop().catch(() => undefined);
    data.remove();
  });
  return { buyer, address, dataDir: data.dir };
}

async function startSeller(account: PrivateKeyAccount, dataDir: string): Promise<SellerHandle> {
  const service = createSellerPayments({
    dataDir,
    account,
    chain: chain.contract,
    logger: silentLogger(),
    clock,
    config: { settleThresholdUsd: '1.00', closeIdleSeconds: 3600, settleIdleSeconds: 600 },
    tickIntervalMs: 0,
  });
  await service.start();
  return { account, dataDir, service };
}

async function newSeller(): Promise<SellerHandle> {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(account.address, { ethWei: DEFAULT_FAUCET_ETH });
  const data = tempDataDir('seller');
  const handle = await startSeller(account, data.dir);
  cleanups.push(() => data.remove());
  return handle;
}

/** One paid request: prepare -> (wire) -> admit -> deliver -> record -> complete -> voucher message. */
async function paidRequest(
  buyer: BuyerPaymentService,
  seller: SellerHandle,
  delivered: TokenUsage,
  options: { cancelled?: boolean; claimed?: TokenUsage; maxOutputTokens?: number } = {},
) {
  const maxCostMicro = maxCostOfRequest(
    delivered.inputTokens,
    options.maxOutputTokens ?? 2000,
    PRICE,
  );
  const payment = await buyer.prepare({
    identity: 'default',
    peerId: seller.account.address.slice(2).toLowerCase(),
    sellerAddress: seller.account.address,
    price: PRICE,
    maxCostMicro,
  });
  // The payment object travels inside the JSON request head.
  const onWire: unknown = JSON.parse(JSON.stringify(payment));
  const admission = await seller.service.admit(onWire, { price: PRICE }, maxCostMicro);
  const claimed = options.claimed ?? delivered;
  const claimedCost = costOfUsage(claimed, PRICE);
  seller.service.record(admission.requestId, claimed, claimedCost);
  const trailer = options.cancelled
    ? undefined
    : { usage: claimed, costMicroUsd: claimedCost.toString() };
  const result = await buyer.complete({
    requestId: payment!.requestId,
    peerId: seller.account.address.slice(2).toLowerCase(),
    claimed: trailer,
    estimatedUsage: delivered,
    price: PRICE,
  });
  if (result.voucher) {
    // As if over a libp2p stream on /svc/voucher/1: bytes in, bytes out.
    const reply = await deliverVoucher(
      (bytes) => seller.service.handleVoucherBytes(bytes),
      result.voucher,
    );
    expect(reply).toEqual({ v: 1, ok: true });
  }
  return { payment: payment!, result, admission };
}

async function expectSvcError(promise: Promise<unknown>, code: string): Promise<SvcError> {
  try {
    await promise;
  } catch (error) {
    if (isSvcError(error) && error.code === code) return error;
    throw error;
  }
  throw new Error(`expected SvcError ${code}`);
}

describe('payments end to end on anvil', () => {
  it('pays sellers exactly the advertised price for delivered tokens, survives restarts, and returns the rest', async () => {
    const { buyer, address: buyerAddress } = await newBuyer();
    await chain.faucet(buyerAddress, { usdcMicro: 2_000_000n });
    const swept = await buyer.sweeper.sweepOnce();
    expect(swept).toEqual([{ identity: 'default', depositedMicro: 2_000_000n, gasPaidBy: 'self' }]);
    expect(await chain.contract.creditsOf(buyerAddress)).toBe(2_000_000n);

    // Seller A: plain, streamed and one cancelled request, a restart midway.
    let sellerA = await newSeller();
    const usages: TokenUsage[] = [
      { inputTokens: 1200, cachedInputTokens: 0, outputTokens: 350 },
      { inputTokens: 5400, cachedInputTokens: 4096, outputTokens: 1200 }, // streamed
      { inputTokens: 800, cachedInputTokens: 0, outputTokens: 77 }, // streamed, cancelled midway
      { inputTokens: 90_000, cachedInputTokens: 0, outputTokens: 1999 }, // needs a lock top-up
    ];
    let expectedA = 0n;
    for (const [index, usage] of usages.entries()) {
      const { result } = await paidRequest(buyer, sellerA, usage, { cancelled: index === 2 });
      expect(result.claim.accepted).toBe(true);
      expectedA += costOfUsage(usage, PRICE);
      expect(result.cumulativeMicro).toBe(expectedA);
    }
    const lockA = (await chain.contract.readChannel(buyer.channels.list()[0]!.channelId))
      .lockedMicro;
    expect(lockA).toBeGreaterThan(50_000n); // topped up beyond the 0.05 USD first lock

    await sellerA.service.stop();
    sellerA = await startSeller(sellerA.account, sellerA.dataDir);
    const late: TokenUsage = { inputTokens: 3000, cachedInputTokens: 0, outputTokens: 640 };
    await paidRequest(buyer, sellerA, late);
    expectedA += costOfUsage(late, PRICE);

    // Idle long enough: the restarted seller settles and closes with the latest voucher.
    clock.advance(3601 * 1000);
    await sellerA.service.tick();
    expect(await chain.contract.usdcBalanceOf(sellerA.account.address)).toBe(expectedA);
    const channelA = buyer.channels.list()[0]!;
    expect((await chain.contract.readChannel(channelA.channelId)).status).toBe('closed');
    await sellerA.service.stop();

    // Seller B: the buyer asks to close while the seller is down; the restarted seller settles.
    let sellerB = await newSeller();
    const usageB: TokenUsage = { inputTokens: 2000, cachedInputTokens: 0, outputTokens: 500 };
    await paidRequest(buyer, sellerB, usageB);
    await paidRequest(buyer, sellerB, usageB);
    const expectedB = 2n * costOfUsage(usageB, PRICE);
    await sellerB.service.stop();
    const channelB = buyer.channels
      .list()
      .find((row) => row.seller === sellerB.account.address.toLowerCase())!;
    await buyer.channels.requestClose(channelB.channelId);
    sellerB = await startSeller(sellerB.account, sellerB.dataDir);
    expect(await chain.contract.usdcBalanceOf(sellerB.account.address)).toBe(expectedB);
    expect((await chain.contract.readChannel(channelB.channelId)).status).toBe('closed');
    await sellerB.service.stop();

    // Seller C disappears: the buyer reclaims the unspent lock after the grace period.
    const sellerC = await newSeller();
    await paidRequest(buyer, sellerC, usageB);
    await sellerC.service.stop();
    const channelC = buyer.channels
      .list()
      .find((row) => row.seller === sellerC.account.address.toLowerCase())!;
    const closing = await buyer.channels.requestClose(channelC.channelId);
    expect(closing.status).toBe('closing');
    await expectSvcError(buyer.channels.reclaim(channelC.channelId), 'invalid_request');
    await chain.increaseTime(GRACE_SECONDS + 1);
    const reclaimed = await buyer.channels.reclaim(channelC.channelId);
    expect(reclaimed.status).toBe('closed');
    expect(await chain.contract.usdcBalanceOf(sellerC.account.address)).toBe(0n);

    // Everything is closed: the buyer's credits are its deposit minus exactly what it owed.
    expect(await chain.contract.creditsOf(buyerAddress)).toBe(2_000_000n - expectedA - expectedB);
    const metering = await buyer.channels.metering({ refresh: true });
    expect(
      metering.map((entry) => [
        entry.status,
        entry.requests,
        entry.signedMicro,
        entry.settledMicro,
      ]),
    ).toEqual([
      ['closed', 5, expectedA, expectedA],
      ['closed', 2, expectedB, expectedB],
      ['closed', 1, costOfUsage(usageB, PRICE), 0n],
    ]);
    const [statsA] = await chain.contract.sellerStats([sellerA.account.address]);
    expect(statsA).toMatchObject({
      settledVolumeMicro: expectedA,
      channelCount: 1,
      uniqueBuyers: 1,
    });
    const [statsC] = await chain.contract.sellerStats([sellerC.account.address]);
    expect(statsC).toMatchObject({ reclaimedUnsettled: 1 });
    const unknown = privateKeyToAccount(generatePrivateKey()).address;
    const reputations = await new ReputationReader({ contract: chain.contract }).read([
      sellerA.account.address,
      sellerC.account.address,
      unknown,
    ]);
    expect(reputations.map((entry) => entry.score)).toEqual([expect.any(Number), 0, null]);
    expect(reputations[0]!.score).toBeGreaterThan(0);
  });

  it('answers insufficient_deposits when credits run out, and serves again after a deposit', async () => {
    const { buyer, address } = await newBuyer({ lockUsd: '0.01' });
    const seller = await newSeller();
    const big: TokenUsage = { inputTokens: 100_000, cachedInputTokens: 0, outputTokens: 0 }; // 0.15 USD
    const error = await expectSvcError(
      paidRequest(buyer, seller, big, { maxOutputTokens: 0 }),
      'insufficient_deposits',
    );
    expect(error.status).toBe(402);
    expect(error.message).toContain('svc buyer deposit');
    expect(error.details).toMatchObject({ neededUsd: '0.150000', availableUsd: '0.000000' });

    await chain.faucet(address, { usdcMicro: 100_000n });
    await buyer.sweeper.sweepOnce();
    const partly = await expectSvcError(
      paidRequest(buyer, seller, big, { maxOutputTokens: 0 }),
      'insufficient_deposits',
    );
    expect(partly.details).toMatchObject({ neededUsd: '0.050000' });

    await chain.faucet(address, { usdcMicro: 50_000n });
    await buyer.sweeper.sweepOnce();
    const { result } = await paidRequest(buyer, seller, big, { maxOutputTokens: 0 });
    expect(result.amountMicro).toBe(150_000n);
    // Credits are now all locked: the next request is refused again, without a loop.
    await expectSvcError(
      paidRequest(buyer, seller, big, { maxOutputTokens: 0 }),
      'insufficient_deposits',
    );
    await seller.service.stop();
  });
});
