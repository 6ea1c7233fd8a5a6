/**
 * Payments through a seller's restart, a channel the seller closed, deposits, an unreachable
 * RPC and a seller that counts more committed than the buyer, on a real anvil chain.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { createChainClients, DEFAULT_FAUCET_ETH, PaymentsContract } from '../chain/index.js';
import { isSvcError } from '../errors/index.js';
import { IdentityStore } from '../identity/index.js';
import { silentLogger } from '../log/index.js';
import { createBuyerPayments, createSellerPayments } from './index.js';
import {
  MAX_COST,
  PRICE,
  paymentsOnChain,
  prepare,
  rejection,
  serve,
} from './testing/faultsFixture.js';
import { tempDataDir } from './testing.js';

const { chain, cleanups, clock, setup } = paymentsOnChain();

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
      chain: chain().contract,
      logger: silentLogger(),
      tickIntervalMs: 0,
    });
    await fresh.start();
    cleanups.push(() => fresh.stop().catch(() => undefined));
    const second = await serve(buyer, fresh, await prepare(buyer, sellerAccount));
    expect(second.cumulativeMicro).toBe(12_000n);
    await fresh.settleAll();
    expect(await chain().contract.usdcBalanceOf(sellerAccount.address)).toBe(12_000n);
  });
});

describe('channels closed by the seller', () => {
  it('moves to a new channel after the seller closed the old one', async () => {
    const { buyer, seller, sellerAccount } = await setup();
    await serve(buyer, seller, await prepare(buyer, sellerAccount));
    const first = buyer.channels.list()[0]!.channelId;
    clock.advance(86_401_000);
    await seller.tick();
    expect((await chain().contract.readChannel(first)).status).toBe('closed');
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
    await chain().faucet(address, { ethWei: DEFAULT_FAUCET_ETH });
    const buyer = createBuyerPayments({
      dataDir: data.dir,
      identities,
      chain: chain().contract,
      logger: silentLogger(),
      sweepIntervalMs: 50,
    });
    cleanups.push(async () => {
      await buyer.stop().catch(() => undefined);
      data.remove();
    });
    await buyer.start();
    await chain().faucet(address, { usdcMicro: 123_456n });
    const deadline = Date.now() + 20_000;
    while ((await chain().contract.creditsOf(address)) !== 123_456n && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await chain().contract.creditsOf(address)).toBe(123_456n);
    expect(await chain().contract.usdcBalanceOf(address)).toBe(0n);
  });

  it('reports an unreachable RPC clearly and falls back to a second RPC URL', async () => {
    const dead = 'http://127.0.0.1:9';
    const deadClients = createChainClients({
      network: 'local',
      rpcUrls: [dead],
      chainId: chain().deployment.chainId,
    });
    const deadContract = new PaymentsContract(
      deadClients,
      chain().deployment.paymentsAddress,
      chain().deployment.usdcAddress,
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
      rpcUrls: [dead, chain().rpcUrl],
      chainId: chain().deployment.chainId,
    });
    const viaFallback = new PaymentsContract(
      fallbackClients,
      chain().deployment.paymentsAddress,
      chain().deployment.usdcAddress,
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
