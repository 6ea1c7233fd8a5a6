/**
 * Per-unit prices through the real payments services on anvil (decision 091): n images at
 * imageUsd and one video at videoUsd are paid exactly, with the buyer's own count capping a
 * seller that claims more images than it delivered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAUCET_ETH, type LocalChain, startLocalChain } from '../../chain/index.js';
import { IdentityStore } from '../../identity/index.js';
import { silentLogger } from '../../log/index.js';
import {
  costOfUsage,
  type TokenPriceMicro,
  unitPriceMicro,
  unitUsage,
  usdNumberToMicro,
} from '../../money/index.js';
import { createBuyerPayments, createSellerPayments } from '../../payments/index.js';

let chain: LocalChain;
const dirs: string[] = [];
const stops: Array<() => Promise<unknown>> = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), `svc-media-pay-${prefix}-`));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  chain = await startLocalChain({ gracePeriodSeconds: 600 });
}, 60_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await chain?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('unit prices through the payments services', () => {
  it('pays n × imageUsd and videoUsd exactly, never more than the buyer counted', async () => {
    const identities = new IdentityStore(tempDir('buyer'), {});
    const buyerAddress = identities.loadDefault().account.address;
    await chain.faucet(buyerAddress, { ethWei: DEFAULT_FAUCET_ETH, usdcMicro: 2_000_000n });
    const buyer = createBuyerPayments({
      dataDir: dirs.at(-1)!,
      identities,
      chain: chain.contract,
      logger: silentLogger(),
      clock: { now: () => Date.now() },
      config: { channelLockUsd: '1' },
      sweepIntervalMs: 0,
    });
    await buyer.start();
    stops.push(() => buyer.stop());
    await buyer.sweeper.sweepOnce();

    const account = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(account.address, { ethWei: DEFAULT_FAUCET_ETH });
    const seller = createSellerPayments({
      dataDir: tempDir('seller'),
      account,
      chain: chain.contract,
      logger: silentLogger(),
      clock: { now: () => Date.now() },
      config: { settleThresholdUsd: '10.00', closeIdleSeconds: 3600, settleIdleSeconds: 600 },
      tickIntervalMs: 0,
    });
    await seller.start();
    stops.push(() => seller.stop());
    const peerId = account.address.slice(2).toLowerCase();

    const pay = async (
      price: TokenPriceMicro,
      asked: number,
      claimedUnits: number,
      counted: number,
    ) => {
      const maxCostMicro = costOfUsage(unitUsage(asked), price);
      const payment = await buyer.prepare({
        identity: 'default',
        peerId,
        sellerAddress: account.address,
        price,
        maxCostMicro,
      });
      const admission = await seller.admit(
        JSON.parse(JSON.stringify(payment)),
        { price },
        maxCostMicro,
      );
      const claimed = unitUsage(claimedUnits);
      const claimedCost = costOfUsage(claimed, price);
      seller.record(admission.requestId, claimed, claimedCost);
      return buyer.complete({
        requestId: payment!.requestId,
        peerId,
        claimed: { usage: claimed, costMicroUsd: claimedCost.toString() },
        estimatedUsage: unitUsage(counted),
        price,
      });
    };

    const image = unitPriceMicro(usdNumberToMicro(0.02));
    const video = unitPriceMicro(usdNumberToMicro(0.5));
    const first = await pay(image, 3, 3, 3);
    expect(first.claim.accepted).toBe(true);
    expect(first.cumulativeMicro).toBe(60_000n);
    // A pending video poll: authorised up to videoUsd, nothing delivered, nothing claimed.
    const pollMax = costOfUsage(unitUsage(1), video);
    const poll = await buyer.prepare({
      identity: 'default',
      peerId,
      sellerAddress: account.address,
      price: video,
      maxCostMicro: pollMax,
    });
    const pollAdmission = await seller.admit(
      JSON.parse(JSON.stringify(poll)),
      { price: video },
      pollMax,
    );
    // What the seller's media handler does for a poll that delivers nothing.
    seller.record(pollAdmission.requestId, unitUsage(0), 0n);
    const pending = await buyer.complete({
      requestId: poll!.requestId,
      peerId,
      claimed: {},
      estimatedUsage: unitUsage(0),
      price: video,
    });
    expect(pending.cumulativeMicro).toBe(60_000n);
    const second = await pay(video, 1, 1, 1);
    expect(second.cumulativeMicro).toBe(560_000n);
    // The seller claims 2 images, the buyer received 1: only 1 is paid.
    const over = await pay(image, 2, 2, 1);
    expect(over.claim.accepted).toBe(false);
    expect(over.cumulativeMicro).toBe(580_000n);
  }, 120_000);
});
