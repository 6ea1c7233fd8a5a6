/** Invariants of SvcPayments on a real anvil chain (TestUSDC: testUsdc.test.ts). */
import {
  type Address,
  type Hex,
  hashTypedData,
  keccak256,
  parseSignature,
  stringToHex,
  toHex,
} from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_FAUCET_ETH,
  type LocalChain,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  startLocalChain,
} from '../chain/index.js';
import {
  channelIdOf,
  type PaymentsDomain,
  signReserve,
  signVoucher,
  typedDataDomain,
  VOUCHER_TYPES,
  voucherDigest,
} from '../payments/index.js';
import { SvcPaymentsAbi } from './index.js';

let chain: LocalChain;
let domain: PaymentsDomain;

async function wallet(usdcMicro = 0n): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(account.address, { usdcMicro, ethWei: DEFAULT_FAUCET_ETH });
  return account;
}

function salt(label: string): Hex {
  return keccak256(stringToHex(label));
}

async function deadline(offsetSeconds = 3600): Promise<bigint> {
  return BigInt((await chain.contract.chainTime()) + offsetSeconds);
}

/** Opens a channel of `maxAmount` from a fresh buyer with `deposit` credits to a fresh seller. */
async function openChannel(depositMicro: bigint, maxAmount: bigint, label: string) {
  const buyer = await wallet(depositMicro);
  const seller = await wallet();
  await chain.contract.deposit(buyer, depositMicro);
  const channelSalt = salt(label);
  const channelId = channelIdOf(buyer.address, seller.address, channelSalt);
  const reserve = {
    channelId,
    buyer: buyer.address,
    seller: seller.address,
    maxAmount,
    deadline: await deadline(),
  };
  const signature = await signReserve(buyer, domain, reserve);
  await chain.contract.openChannel(seller, { ...reserve, salt: channelSalt, signature });
  return { buyer, seller, channelId, salt: channelSalt };
}

/** USDC held by the contract equals credits plus unsettled locks of the accounts we know. */
async function expectSolvent(buyers: Address[], channels: Hex[]): Promise<void> {
  const held = await chain.contract.usdcBalanceOf(chain.deployment.paymentsAddress);
  let owed = 0n;
  for (const buyer of buyers) owed += await chain.contract.creditsOf(buyer);
  for (const id of channels) {
    const channel = await chain.contract.readChannel(id);
    if (channel.status === 'open') owed += channel.lockedMicro - channel.settledMicro;
  }
  expect(held).toBeGreaterThanOrEqual(owed);
}

beforeAll(async () => {
  chain = await startLocalChain({ gracePeriodSeconds: 600 });
  domain = { chainId: chain.deployment.chainId, paymentsAddress: chain.deployment.paymentsAddress };
});

afterAll(async () => {
  await chain?.stop();
});

describe('SvcPayments', () => {
  it('computes the same channel id and voucher digest as the contract and viem', async () => {
    const buyer = privateKeyToAccount(generatePrivateKey()).address;
    const seller = privateKeyToAccount(generatePrivateKey()).address;
    expect(await chain.contract.channelIdOf(buyer, seller, salt('x'))).toBe(
      channelIdOf(buyer, seller, salt('x')),
    );
    const voucher = { channelId: salt('c'), cumulativeAmount: 123_456n };
    expect(voucherDigest(domain, voucher)).toBe(
      hashTypedData({
        domain: typedDataDomain(domain),
        types: VOUCHER_TYPES,
        primaryType: 'Voucher',
        message: voucher,
      }),
    );
  });

  it('pays the seller the delta of cumulative vouchers and returns the rest of the lock on close', async () => {
    const { buyer, seller, channelId } = await openChannel(5_000_000n, 2_000_000n, 'happy');
    expect(await chain.contract.creditsOf(buyer.address)).toBe(3_000_000n);
    const first = await signVoucher(buyer, domain, { channelId, cumulativeAmount: 300_000n });
    await chain.contract.settle(seller, channelId, 300_000n, first);
    expect(await chain.contract.usdcBalanceOf(seller.address)).toBe(300_000n);
    const last = await signVoucher(buyer, domain, { channelId, cumulativeAmount: 750_001n });
    await chain.contract.close(seller, channelId, 750_001n, last);
    expect(await chain.contract.usdcBalanceOf(seller.address)).toBe(750_001n);
    expect(await chain.contract.creditsOf(buyer.address)).toBe(5_000_000n - 750_001n);
    const channel = await chain.contract.readChannel(channelId);
    expect(channel.status).toBe('closed');
    const [stats] = await chain.contract.sellerStats([seller.address]);
    expect(stats).toMatchObject({
      settledVolumeMicro: 750_001n,
      channelCount: 1,
      uniqueBuyers: 1,
      reclaimedUnsettled: 0,
    });
    expect(stats!.firstSettlementAt).toBeGreaterThan(0);
    await expectSolvent([buyer.address], [channelId]);
    // A closed channel takes no more vouchers, even valid ones.
    const later = await signVoucher(buyer, domain, { channelId, cumulativeAmount: 900_000n });
    await expect(chain.contract.settle(seller, channelId, 900_000n, later)).rejects.toThrow(
      /channel not open/,
    );
  });

  it('never redeems a voucher twice, below what was settled, or above the lock', async () => {
    const { buyer, seller, channelId } = await openChannel(1_000_000n, 1_000_000n, 'replay');
    const voucher = await signVoucher(buyer, domain, { channelId, cumulativeAmount: 400_000n });
    await chain.contract.settle(seller, channelId, 400_000n, voucher);
    await expect(chain.contract.settle(seller, channelId, 400_000n, voucher)).rejects.toThrow(
      /already settled/,
    );
    const lower = await signVoucher(buyer, domain, { channelId, cumulativeAmount: 100_000n });
    await expect(chain.contract.settle(seller, channelId, 100_000n, lower)).rejects.toThrow(
      /already settled/,
    );
    const above = await signVoucher(buyer, domain, { channelId, cumulativeAmount: 1_000_001n });
    await expect(chain.contract.settle(seller, channelId, 1_000_001n, above)).rejects.toThrow(
      /above lock/,
    );
    expect(await chain.contract.usdcBalanceOf(seller.address)).toBe(400_000n);
    await expectSolvent([buyer.address], [channelId]);
  });

  it('rejects vouchers bound to another chain, contract or channel, or signed by someone else', async () => {
    const { buyer, seller, channelId } = await openChannel(1_000_000n, 500_000n, 'bound');
    const other = await openChannel(1_000_000n, 500_000n, 'bound-other');
    const amount = 10_000n;
    const wrongChain = await signVoucher(
      buyer,
      { ...domain, chainId: domain.chainId + 1 },
      { channelId, cumulativeAmount: amount },
    );
    const wrongContract = await signVoucher(
      buyer,
      { ...domain, paymentsAddress: chain.deployment.usdcAddress },
      { channelId, cumulativeAmount: amount },
    );
    const wrongChannel = await signVoucher(buyer, domain, {
      channelId: other.channelId,
      cumulativeAmount: amount,
    });
    const wrongSigner = await signVoucher(seller, domain, { channelId, cumulativeAmount: amount });
    const wrongAmount = await signVoucher(buyer, domain, {
      channelId,
      cumulativeAmount: amount - 1n,
    });
    for (const signature of [wrongChain, wrongContract, wrongChannel, wrongSigner, wrongAmount]) {
      await expect(chain.contract.settle(seller, channelId, amount, signature)).rejects.toThrow(
        /invalid voucher signature/,
      );
    }
    expect(await chain.contract.usdcBalanceOf(seller.address)).toBe(0n);
  });

  it('rejects forged, replayed, expired and unfunded reserve authorisations', async () => {
    const buyer = await wallet(1_000_000n);
    const seller = await wallet();
    await chain.contract.deposit(buyer, 1_000_000n);
    const channelSalt = salt('reserve');
    const channelId = channelIdOf(buyer.address, seller.address, channelSalt);
    const reserve = {
      channelId,
      buyer: buyer.address,
      seller: seller.address,
      maxAmount: 600_000n,
      deadline: await deadline(),
    };
    const open = (signature: Hex, overrides: Partial<typeof reserve> = {}) =>
      chain.contract.openChannel(seller, {
        ...reserve,
        ...overrides,
        salt: channelSalt,
        signature,
      });
    await expect(
      open(await signReserve(buyer, { ...domain, chainId: 1 }, reserve)),
    ).rejects.toThrow(/invalid reserve signature/);
    await expect(
      open(
        await signReserve(
          buyer,
          { ...domain, paymentsAddress: chain.deployment.usdcAddress },
          reserve,
        ),
      ),
    ).rejects.toThrow(/invalid reserve signature/);
    await expect(open(await signReserve(seller, domain, reserve))).rejects.toThrow(
      /invalid reserve signature/,
    );
    const signature = await signReserve(buyer, domain, reserve);
    await expect(open(signature, { maxAmount: 700_000n })).rejects.toThrow(
      /invalid reserve signature/,
    );
    const expired = { ...reserve, deadline: BigInt((await chain.contract.chainTime()) - 1) };
    await expect(open(await signReserve(buyer, domain, expired), expired)).rejects.toThrow(
      /reserve expired/,
    );
    // Another seller cannot use the buyer's authorisation for itself.
    const thief = await wallet();
    await expect(
      chain.contract.openChannel(thief, { ...reserve, salt: channelSalt, signature }),
    ).rejects.toThrow(/invalid reserve signature/);
    await open(signature);
    await expect(open(signature)).rejects.toThrow(/channel exists/);
    const tooBig = {
      ...reserve,
      channelId: channelIdOf(buyer.address, seller.address, salt('big')),
      maxAmount: 500_000n,
    };
    await expect(
      chain.contract.openChannel(seller, {
        ...tooBig,
        salt: salt('big'),
        signature: await signReserve(buyer, domain, tooBig),
      }),
    ).rejects.toThrow(/insufficient credits/);
    // Top-up with a reused (lower) authorisation does nothing; a fresh higher one raises the lock.
    await expect(chain.contract.topUp(seller, { ...reserve, signature })).rejects.toThrow(
      /lock not raised/,
    );
    const raised = { ...reserve, maxAmount: 900_000n };
    await chain.contract.topUp(seller, {
      ...raised,
      signature: await signReserve(buyer, domain, raised),
    });
    expect((await chain.contract.readChannel(channelId)).lockedMicro).toBe(900_000n);
    expect(await chain.contract.creditsOf(buyer.address)).toBe(100_000n);
    await expectSolvent([buyer.address], [channelId]);
  });

  it('lets the buyer reclaim after the grace period while the seller can still settle during it', async () => {
    const { buyer, seller, channelId } = await openChannel(2_000_000n, 1_000_000n, 'grace');
    await chain.contract.requestClose(buyer, channelId);
    await expect(chain.contract.reclaim(buyer, channelId)).rejects.toThrow(/grace period not over/);
    const voucher = await signVoucher(buyer, domain, { channelId, cumulativeAmount: 250_000n });
    await chain.contract.settle(seller, channelId, 250_000n, voucher);
    await expect(chain.contract.reclaim(seller, channelId)).rejects.toThrow(/only the buyer/);
    await chain.increaseTime(601);
    await chain.contract.reclaim(buyer, channelId);
    expect(await chain.contract.creditsOf(buyer.address)).toBe(2_000_000n - 250_000n);
    await chain.contract.withdraw(buyer, 1_750_000n);
    expect(await chain.contract.usdcBalanceOf(buyer.address)).toBe(1_750_000n);
    await expect(chain.contract.withdraw(buyer, 1n)).rejects.toThrow(/insufficient credits/);
    const [stats] = await chain.contract.sellerStats([seller.address]);
    expect(stats!.reclaimedUnsettled).toBe(0);

    const unsettled = await openChannel(1_000_000n, 1_000_000n, 'reclaim-unsettled');
    await chain.contract.requestClose(unsettled.buyer, unsettled.channelId);
    await chain.increaseTime(601);
    await chain.contract.reclaim(unsettled.buyer, unsettled.channelId);
    const [after] = await chain.contract.sellerStats([unsettled.seller.address]);
    expect(after).toMatchObject({ reclaimedUnsettled: 1, channelCount: 1, settledVolumeMicro: 0n });
  });

  it('a top-up racing a settle leaves both applied and the contract solvent', async () => {
    const { buyer, seller, channelId } = await openChannel(3_000_000n, 1_000_000n, 'race');
    const voucher = await signVoucher(buyer, domain, { channelId, cumulativeAmount: 900_000n });
    const raised = {
      channelId,
      buyer: buyer.address,
      seller: seller.address,
      maxAmount: 2_000_000n,
      deadline: await deadline(),
    };
    const topUpSignature = await signReserve(buyer, domain, raised);
    await Promise.all([
      chain.contract.settle(seller, channelId, 900_000n, voucher),
      chain.contract.topUp(buyer, { ...raised, signature: topUpSignature }),
    ]);
    const channel = await chain.contract.readChannel(channelId);
    expect(channel).toMatchObject({ lockedMicro: 2_000_000n, settledMicro: 900_000n });
    await expectSolvent([buyer.address], [channelId]);
  });

  it('accepts deposits by EIP-3009 ReceiveWithAuthorization from any relayer, once', async () => {
    const buyer = await wallet(700_000n);
    const relayer = await wallet();
    const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
    const validBefore = await deadline();
    const signature = await buyer.signTypedData({
      domain: {
        name: 'USD Coin',
        version: '2',
        chainId: domain.chainId,
        verifyingContract: chain.deployment.usdcAddress,
      },
      types: RECEIVE_WITH_AUTHORIZATION_TYPES,
      primaryType: 'ReceiveWithAuthorization',
      message: {
        from: buyer.address,
        to: chain.deployment.paymentsAddress,
        value: 700_000n,
        validAfter: 0n,
        validBefore,
        nonce,
      },
    });
    const { v, r, s } = parseSignature(signature);
    const submit = () =>
      chain.clients.senderFor(relayer).write({
        address: chain.deployment.paymentsAddress,
        abi: SvcPaymentsAbi,
        functionName: 'depositWithAuthorization',
        args: [buyer.address, 700_000n, 0n, validBefore, nonce, Number(v), r, s],
      });
    await submit();
    expect(await chain.contract.creditsOf(buyer.address)).toBe(700_000n);
    await expect(submit()).rejects.toThrow(/authorization is used/);
  });
});
