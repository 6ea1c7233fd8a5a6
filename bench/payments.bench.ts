/**
 * Per-request payment overhead on an open channel: the buyer's prepare +
 * claim check + voucher signature, and the seller's admit + voucher verification, on a real
 * anvil chain (no transaction happens on this path). Baseline: the same voucher signed and
 * verified with viem's generic typed-data path.
 */
import { recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DEFAULT_FAUCET_ETH, startLocalChain } from '../src/chain/index.js';
import { IdentityStore } from '../src/identity/index.js';
import { silentLogger } from '../src/log/index.js';
import { costOfUsage, toPriceMicro } from '../src/money/index.js';
import {
  createBuyerPayments,
  createSellerPayments,
  signVoucher,
  typedDataDomain,
  VOUCHER_TYPES,
  voucherSigner,
} from '../src/payments/index.js';
import { tempDataDir } from '../src/payments/testing.js';
import { measure, printComparison, printFigure } from './lib.js';

export default async function bench(): Promise<Record<string, unknown>> {
  const chain = await startLocalChain();
  const buyerDir = tempDataDir('bench-buyer');
  const sellerDir = tempDataDir('bench-seller');
  try {
    const identities = new IdentityStore(buyerDir.dir, {});
    const buyerAccount = identities.loadDefault().account;
    const sellerAccount = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(buyerAccount.address, {
      usdcMicro: 1_000_000_000n,
      ethWei: DEFAULT_FAUCET_ETH,
    });
    await chain.faucet(sellerAccount.address, { ethWei: DEFAULT_FAUCET_ETH });
    const logger = silentLogger();
    const buyer = createBuyerPayments({
      dataDir: buyerDir.dir,
      identities,
      chain: chain.contract,
      logger,
      config: { channelLockUsd: '900.00' },
      sweepIntervalMs: 0,
    });
    const seller = createSellerPayments({
      dataDir: sellerDir.dir,
      account: sellerAccount,
      chain: chain.contract,
      logger,
      config: { settleThresholdUsd: '100000.00' },
      tickIntervalMs: 0,
    });
    await buyer.start();
    await seller.start();
    await buyer.sweeper.sweepOnce();
    const price = toPriceMicro({ inputUsdPerMillion: 3, outputUsdPerMillion: 15 });
    const usage = { inputTokens: 1200, cachedInputTokens: 0, outputTokens: 300 };
    const cost = costOfUsage(usage, price);
    const args = {
      identity: 'default',
      peerId: sellerAccount.address.slice(2).toLowerCase(),
      sellerAddress: sellerAccount.address,
      price,
      maxCostMicro: 50_000n,
    };
    // Open the channel once (the only chain transaction).
    let pending = await buyer.prepare(args);
    await seller.admit(pending, { price }, 50_000n);

    let buyerMs = 0;
    let sellerMs = 0;
    const round = async () => {
      const t0 = performance.now();
      const payment = pending ?? (await buyer.prepare(args));
      const t1 = performance.now();
      const admission = await seller.admit(payment, { price }, 50_000n);
      seller.record(admission.requestId, usage, cost);
      const t2 = performance.now();
      const result = await buyer.complete({
        requestId: payment!.requestId,
        peerId: args.peerId,
        claimed: { usage, costMicroUsd: cost.toString() },
        estimatedUsage: usage,
        price,
      });
      const t3 = performance.now();
      await seller.receiveVoucher(result.voucher!);
      const t4 = performance.now();
      pending = undefined;
      buyerMs = t1 - t0 + (t3 - t2);
      sellerMs = t2 - t1 + (t4 - t3);
    };
    const buyerSamples: number[] = [];
    const sellerSamples: number[] = [];
    const total = await measure(
      async () => {
        await round();
        buyerSamples.push(buyerMs);
        sellerSamples.push(sellerMs);
      },
      { iterations: 1000, warmup: 100 },
    );
    const buyerP50 = [...buyerSamples.slice(100)].sort((a, b) => a - b)[
      Math.floor((buyerSamples.length - 100) / 2)
    ]!;
    const sellerP50 = [...sellerSamples.slice(100)].sort((a, b) => a - b)[
      Math.floor((sellerSamples.length - 100) / 2)
    ]!;
    printFigure('buyer prepare + check + sign voucher p50', buyerP50, 'ms', '<= 1 ms');
    printFigure('seller admit + verify voucher p50', sellerP50, 'ms');
    printFigure('whole paid round (buyer + seller) p50', total.p50Ms, 'ms');

    // Signature primitives: ours (hand-hashed digest) vs viem's generic typed-data path.
    const domain = {
      chainId: chain.deployment.chainId,
      paymentsAddress: chain.deployment.paymentsAddress,
    };
    const channelId = `0x${'ab'.repeat(32)}` as const;
    let amount = 1n;
    const ours = await measure(async () => {
      amount++;
      const signature = await signVoucher(buyerAccount, domain, {
        channelId,
        cumulativeAmount: amount,
      });
      await voucherSigner(domain, { channelId, cumulativeAmount: amount }, signature);
    });
    const baseline = await measure(async () => {
      amount++;
      const typed = {
        domain: typedDataDomain(domain),
        types: VOUCHER_TYPES,
        primaryType: 'Voucher' as const,
        message: { channelId, cumulativeAmount: amount },
      };
      const signature = await buyerAccount.signTypedData(typed);
      await recoverTypedDataAddress({ ...typed, signature });
    });
    printComparison(
      'voucher sign + verify p50 (ours vs viem typed data)',
      ours.p50Ms,
      baseline.p50Ms,
      'ms',
    );
    await seller.stop();
    await buyer.stop();
    return {
      buyerOverheadP50Ms: buyerP50,
      sellerOverheadP50Ms: sellerP50,
      paidRound: total,
      signVerify: { ours, baseline },
    };
  } finally {
    await chain.stop();
    buyerDir.remove();
    sellerDir.remove();
  }
}
