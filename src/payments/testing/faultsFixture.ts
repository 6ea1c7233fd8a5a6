/**
 * Buyer and seller payment services on one real anvil chain, for the payments fault tests
 * (src/payments/payments.faults.test.ts, src/payments/payments.lifecycle.test.ts).
 * `paymentsOnChain()` registers the chain's start and every cleanup with the calling test file.
 */
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll } from 'vitest';
import { DEFAULT_FAUCET_ETH, type LocalChain, startLocalChain } from '../../chain/index.js';
import { isSvcError } from '../../errors/index.js';
import { IdentityStore } from '../../identity/index.js';
import { silentLogger } from '../../log/index.js';
import {
  costOfUsage,
  type TokenPriceMicro,
  type TokenUsage,
  toPriceMicro,
} from '../../money/index.js';
import {
  type BuyerPaymentService,
  type ClaimRefusedEvent,
  createBuyerPayments,
  createSellerPayments,
  type PaymentObject,
  type SellerPaymentService,
} from '../index.js';
import { manualClock, tempDataDir } from '../testing.js';

export const PRICE: TokenPriceMicro = toPriceMicro({
  inputUsdPerMillion: 2,
  outputUsdPerMillion: 8,
});
/** 6,000 micro-USD at PRICE. */
export const USAGE: TokenUsage = { inputTokens: 1000, cachedInputTokens: 0, outputTokens: 500 };
export const MAX_COST = 20_000n;

/** The fields a rejected promise's SvcError carries (throws if it resolves). */
export async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: string; reason: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (isSvcError(error)) return { code: error.code, reason: error.details?.reason };
    throw error;
  }
  throw new Error('expected a rejection');
}

export function prepare(
  buyer: BuyerPaymentService,
  sellerAccount: PrivateKeyAccount,
  requestId?: string,
) {
  return buyer.prepare({
    identity: 'default',
    peerId: sellerAccount.address.slice(2).toLowerCase(),
    sellerAddress: sellerAccount.address,
    price: PRICE,
    maxCostMicro: MAX_COST,
    requestId,
  }) as Promise<PaymentObject>;
}

/** One request served and paid: admitted, recorded at `claimed`, completed, voucher delivered. */
export async function serve(
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

export function paymentsOnChain() {
  let local: LocalChain | undefined;
  const cleanups: (() => Promise<void> | void)[] = [];
  const clock = manualClock();

  beforeAll(async () => {
    local = await startLocalChain({ gracePeriodSeconds: 600 });
  });

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await local?.stop();
  });

  const chain = (): LocalChain => {
    if (!local) throw new Error('the chain starts in beforeAll');
    return local;
  };

  /** A funded buyer (credits swept) and a seller, both started; stopped after the file. */
  async function setup(
    options: { depositMicro?: bigint; lockUsd?: string; maxUnvoucheredUsd?: string } = {},
  ) {
    const buyerDir = tempDataDir('buyer');
    const sellerDir = tempDataDir('seller');
    const identities = new IdentityStore(buyerDir.dir, {});
    const buyerAccount = identities.loadDefault().account;
    const sellerAccount = privateKeyToAccount(generatePrivateKey());
    await chain().faucet(buyerAccount.address, {
      ethWei: DEFAULT_FAUCET_ETH,
      usdcMicro: options.depositMicro ?? 1_000_000n,
    });
    await chain().faucet(sellerAccount.address, { ethWei: DEFAULT_FAUCET_ETH });
    const refused: ClaimRefusedEvent[] = [];
    const buyer = createBuyerPayments({
      dataDir: buyerDir.dir,
      identities,
      chain: chain().contract,
      logger: silentLogger(),
      clock,
      config: { channelLockUsd: options.lockUsd ?? '0.10' },
      sweepIntervalMs: 0,
      onClaimRefused: (event) => refused.push(event),
    });
    const seller = createSellerPayments({
      dataDir: sellerDir.dir,
      account: sellerAccount,
      chain: chain().contract,
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

  return { chain, cleanups, clock, setup };
}
