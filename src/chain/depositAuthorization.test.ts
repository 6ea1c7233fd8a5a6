/** Gasless deposits on anvil: the owner signs, a relayer pays the gas, the owner is credited once. */
import { parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  depositAuthorizationGasWei,
  ethBalanceOf,
  isAuthorizationUsed,
  type LocalChain,
  signDepositAuthorization,
  startLocalChain,
  submitDepositAuthorization,
  usdcTokenDomain,
} from './index.js';

let chain: LocalChain;

beforeAll(async () => {
  chain = await startLocalChain();
});
afterAll(async () => {
  await chain?.stop();
});

async function validBefore(): Promise<bigint> {
  return BigInt((await chain.contract.chainTime()) + 3600);
}

describe('depositWithAuthorization', () => {
  it('reads the token EIP-712 domain from the token itself', async () => {
    expect(await usdcTokenDomain(chain.contract)).toEqual({ name: 'USD Coin', version: '2' });
  });

  it('credits the signer by exactly the amount; the relayer pays only gas; a replay reverts', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const relayer = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(owner.address, { usdcMicro: 3_250_000n });
    await chain.faucet(relayer.address, { usdcMicro: 5_000_000n, ethWei: parseEther('1') });
    const auth = await signDepositAuthorization(owner, chain.contract, {
      valueMicro: 3_250_000n,
      validAfter: 0n,
      validBefore: await validBefore(),
    });
    // The owner holds no ETH at all, yet the cost can be estimated for either submitter.
    expect(await ethBalanceOf(chain.contract, owner.address)).toBe(0n);
    expect(await depositAuthorizationGasWei(chain.contract, owner.address, auth)).toBeGreaterThan(
      0n,
    );
    const relayerEthBefore = await ethBalanceOf(chain.contract, relayer.address);
    expect(await isAuthorizationUsed(chain.contract, auth)).toBe(false);

    await submitDepositAuthorization(chain.contract, relayer, auth);

    expect(await chain.contract.creditsOf(owner.address)).toBe(3_250_000n);
    expect(await chain.contract.usdcBalanceOf(owner.address)).toBe(0n);
    expect(await chain.contract.usdcBalanceOf(relayer.address)).toBe(5_000_000n);
    expect(await chain.contract.creditsOf(relayer.address)).toBe(0n);
    expect(await ethBalanceOf(chain.contract, relayer.address)).toBeLessThan(relayerEthBefore);
    expect(await ethBalanceOf(chain.contract, owner.address)).toBe(0n);
    expect(await isAuthorizationUsed(chain.contract, auth)).toBe(true);

    // The same authorization again (a resubmission after a lost answer) cannot deposit twice,
    // even when the wallet has been refilled meanwhile.
    await chain.faucet(owner.address, { usdcMicro: 3_250_000n });
    await expect(submitDepositAuthorization(chain.contract, relayer, auth)).rejects.toThrow(
      /authorization is used/,
    );
    expect(await chain.contract.creditsOf(owner.address)).toBe(3_250_000n);
    expect(await chain.contract.usdcBalanceOf(owner.address)).toBe(3_250_000n);
  });

  it('refuses an authorization signed by someone other than `from`, and an expired one', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const thief = privateKeyToAccount(generatePrivateKey());
    const relayer = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(owner.address, { usdcMicro: 1_000_000n });
    await chain.faucet(relayer.address, { ethWei: parseEther('1') });
    const forged = await signDepositAuthorization(thief, chain.contract, {
      valueMicro: 1_000_000n,
      validAfter: 0n,
      validBefore: await validBefore(),
    });
    await expect(
      submitDepositAuthorization(chain.contract, relayer, { ...forged, from: owner.address }),
    ).rejects.toThrow(/invalid signature/);
    const expired = await signDepositAuthorization(owner, chain.contract, {
      valueMicro: 1_000_000n,
      validAfter: 0n,
      validBefore: BigInt(await chain.contract.chainTime()),
    });
    await expect(submitDepositAuthorization(chain.contract, relayer, expired)).rejects.toThrow(
      /expired/,
    );
    expect(await chain.contract.usdcBalanceOf(owner.address)).toBe(1_000_000n);
    expect(await chain.contract.creditsOf(owner.address)).toBe(0n);
  });
});
