/**
 * A seller settling several channels in a row (as `settleAll` does) on a real anvil chain: each
 * settlement's gas is estimated in the block time of the one before, and mined in a later block.
 */
import { type Hex, keccak256, stringToHex } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAUCET_ETH, type LocalChain, startLocalChain } from '../chain/index.js';
import { channelIdOf, type PaymentsDomain, signReserve, signVoucher } from './signatures.js';

const AMOUNT_MICRO = 1_000_000n;

let chain: LocalChain;
let domain: PaymentsDomain;

beforeAll(async () => {
  chain = await startLocalChain();
  domain = { chainId: chain.deployment.chainId, paymentsAddress: chain.deployment.paymentsAddress };
});

afterAll(async () => {
  await chain?.stop();
});

/** An anvil-only JSON-RPC call (viem's types know only the standard methods). */
async function anvil(method: string, params: unknown[] = []): Promise<void> {
  await chain.clients.publicClient.request({
    method: method as 'eth_chainId',
    params: params as unknown as undefined,
  });
}

/** A channel from a fresh buyer to `seller`, locked with `AMOUNT_MICRO`, and its final voucher. */
async function openPaidChannel(seller: PrivateKeyAccount, label: string) {
  const buyer = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(buyer.address, { usdcMicro: AMOUNT_MICRO, ethWei: DEFAULT_FAUCET_ETH });
  await chain.contract.deposit(buyer, AMOUNT_MICRO);
  const salt = keccak256(stringToHex(label));
  const channelId = channelIdOf(buyer.address, seller.address, salt);
  const reserve = {
    channelId,
    buyer: buyer.address,
    seller: seller.address,
    maxAmount: AMOUNT_MICRO,
    deadline: BigInt((await chain.contract.chainTime()) + 3_600),
  };
  const signature = await signReserve(buyer, domain, reserve);
  await chain.contract.openChannel(seller, { ...reserve, salt, signature });
  const voucher = await signVoucher(buyer, domain, { channelId, cumulativeAmount: AMOUNT_MICRO });
  return { channelId, voucher };
}

/** Resolves once `address` has a transaction waiting in the mempool beyond `mined`. */
async function waitForPending(address: Hex, mined: number): Promise<void> {
  for (;;) {
    const pending = await chain.clients.publicClient.getTransactionCount({
      address,
      blockTag: 'pending',
    });
    if (pending > mined) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('settling channels one after another', () => {
  it('the second settlement does not run out of gas when mined in a later block than its estimate', async () => {
    const seller = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(seller.address, { ethWei: DEFAULT_FAUCET_ETH });
    const first = await openPaidChannel(seller, 'first');
    const second = await openPaidChannel(seller, 'second');
    const start = await chain.contract.chainTime();
    await chain.contract.close(seller, first.channelId, AMOUNT_MICRO, first.voucher);
    const settledAt = (await chain.contract.sellerStats([seller.address]))[0]!.lastSettlementAt;
    await anvil('evm_setAutomine', [false]);
    try {
      // The estimate runs in the time of the first settlement: writing `lastSettlementAt` again
      // is a no-op there. The transaction is then mined later, where it is a real write.
      await anvil('evm_setNextBlockTimestamp', [settledAt]);
      const mined = await chain.clients.publicClient.getTransactionCount({
        address: seller.address,
      });
      const closing = chain.contract.close(seller, second.channelId, AMOUNT_MICRO, second.voucher);
      await waitForPending(seller.address, mined);
      await anvil('evm_setNextBlockTimestamp', [settledAt + 12]);
      await anvil('evm_mine');
      await closing;
    } finally {
      await anvil('evm_setAutomine', [true]);
    }
    const [stats] = await chain.contract.sellerStats([seller.address]);
    expect(stats!.settledVolumeMicro).toBe(2n * AMOUNT_MICRO);
    expect(stats!.lastSettlementAt).toBe(settledAt + 12);
    expect(settledAt).toBeGreaterThanOrEqual(start);
    expect((await chain.contract.readChannel(second.channelId)).status).toBe('closed');
  });
});
