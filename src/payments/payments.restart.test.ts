/** The chain going away and coming back (anvil restarted from its state file) at service level. */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAUCET_ETH, type LocalChain, startLocalChain } from '../chain/index.js';
import { isSvcError } from '../errors/index.js';
import { IdentityStore } from '../identity/index.js';
import { silentLogger } from '../log/index.js';
import { costOfUsage, toPriceMicro } from '../money/index.js';
import { createBuyerPayments, createSellerPayments } from './index.js';
import { tempDataDir } from './testing.js';

const dirs = [
  tempDataDir('restart-chain'),
  tempDataDir('restart-buyer'),
  tempDataDir('restart-seller'),
];
let chain: LocalChain | undefined;

afterAll(async () => {
  await chain?.stop();
  for (const dir of dirs) dir.remove();
});

describe('chain restarts', () => {
  it('fails clearly while the chain is down and settles the kept voucher once it is back', async () => {
    const [chainDir, buyerDir, sellerDir] = dirs as [
      (typeof dirs)[0],
      (typeof dirs)[0],
      (typeof dirs)[0],
    ];
    const stateFile = `${chainDir.dir}/state.json`;
    chain = await startLocalChain({ dataDir: chainDir.dir, stateFile });
    const port = chain.anvil.port;
    const identities = new IdentityStore(buyerDir.dir, {});
    const buyerAddress = identities.loadDefault().account.address;
    const seller = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(buyerAddress, { usdcMicro: 1_000_000n, ethWei: DEFAULT_FAUCET_ETH });
    await chain.faucet(seller.address, { ethWei: DEFAULT_FAUCET_ETH });
    const logger = silentLogger();
    const buyer = createBuyerPayments({
      dataDir: buyerDir.dir,
      identities,
      chain: chain.contract,
      logger,
      sweepIntervalMs: 0,
    });
    const sellerPayments = createSellerPayments({
      dataDir: sellerDir.dir,
      account: seller,
      chain: chain.contract,
      logger,
      tickIntervalMs: 0,
    });
    await buyer.start();
    await sellerPayments.start();
    await buyer.sweeper.sweepOnce();
    const price = toPriceMicro({ inputUsdPerMillion: 5, outputUsdPerMillion: 10 });
    const usage = { inputTokens: 2000, cachedInputTokens: 0, outputTokens: 1000 };
    const args = {
      identity: 'default',
      peerId: 'p',
      sellerAddress: seller.address,
      price,
      maxCostMicro: 50_000n,
    };
    const payment = await buyer.prepare(args);
    const admission = await sellerPayments.admit(payment, { price }, 50_000n);
    sellerPayments.record(admission.requestId, usage, costOfUsage(usage, price));
    const done = await buyer.complete({
      requestId: payment!.requestId,
      peerId: 'p',
      claimed: { usage },
      estimatedUsage: usage,
      price,
    });
    await sellerPayments.receiveVoucher(done.voucher!);

    await chain.stop();
    // Served from local state: an open channel needs no chain on the request path...
    const offline = await buyer.prepare(args);
    expect(offline?.voucher?.cumulativeAmount).toBe('20000');
    buyer.release(offline!.requestId);
    // ...but settling and opening new channels fail clearly, and nothing is lost.
    await sellerPayments.tick();
    expect(sellerPayments.channels()[0]).toMatchObject({ voucherMicro: 20_000n, settledMicro: 0n });
    const other = privateKeyToAccount(generatePrivateKey()).address;
    const failure = await buyer
      .prepare({ ...args, sellerAddress: other })
      .catch((error: unknown) => error);
    expect(isSvcError(failure) && failure.code).toBe('chain_unavailable');

    chain = await startLocalChain({ dataDir: chainDir.dir, stateFile, port });
    await sellerPayments.settleAll();
    expect(await chain.contract.usdcBalanceOf(seller.address)).toBe(20_000n);
    expect(sellerPayments.channels()[0]).toMatchObject({ settledMicro: 20_000n });
    await sellerPayments.stop();
    await buyer.stop();
  });
});
