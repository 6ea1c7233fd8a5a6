/** TestUSDC, the devnet's stand-in for USDC, on a real anvil chain: the parts of USDC we rely on. */
import { keccak256, parseSignature, stringToHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_FAUCET_ETH,
  type LocalChain,
  startLocalChain,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
} from '../chain/index.js';
import { TestUSDCAbi } from './index.js';

let chain: LocalChain;

beforeAll(async () => {
  chain = await startLocalChain();
});

afterAll(async () => {
  await chain?.stop();
});

describe('TestUSDC', () => {
  it('implements EIP-3009 transferWithAuthorization with the "USD Coin" v2 domain and EIP-2612 permit', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const spender = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(owner.address, { usdcMicro: 1_000_000n, ethWei: DEFAULT_FAUCET_ETH });
    await chain.faucet(spender.address, { usdcMicro: 0n, ethWei: DEFAULT_FAUCET_ETH });
    const usdcDomain = {
      name: 'USD Coin',
      version: '2',
      chainId: chain.deployment.chainId,
      verifyingContract: chain.deployment.usdcAddress,
    } as const;
    const nonce = keccak256(stringToHex('n1'));
    const validBefore = BigInt((await chain.contract.chainTime()) + 3600);
    const message = {
      from: owner.address,
      to: spender.address,
      value: 250_000n,
      validAfter: 0n,
      validBefore,
      nonce,
    };
    const signature = await owner.signTypedData({
      domain: usdcDomain,
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message,
    });
    const relay = chain.clients.senderFor(spender);
    const args = [
      owner.address,
      spender.address,
      250_000n,
      0n,
      validBefore,
      nonce,
      signature,
    ] as const;
    await relay.write({
      address: chain.deployment.usdcAddress,
      abi: TestUSDCAbi,
      functionName: 'transferWithAuthorization',
      args,
    });
    expect(await chain.contract.usdcBalanceOf(spender.address)).toBe(250_000n);
    await expect(
      relay.write({
        address: chain.deployment.usdcAddress,
        abi: TestUSDCAbi,
        functionName: 'transferWithAuthorization',
        args,
      }),
    ).rejects.toThrow(/authorization is used/);

    const permitSignature = await owner.signTypedData({
      domain: usdcDomain,
      types: {
        Permit: [
          { name: 'owner', type: 'address' },
          { name: 'spender', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'nonce', type: 'uint256' },
          { name: 'deadline', type: 'uint256' },
        ],
      },
      primaryType: 'Permit',
      message: {
        owner: owner.address,
        spender: spender.address,
        value: 5n,
        nonce: 0n,
        deadline: validBefore,
      },
    });
    const { v, r, s } = parseSignature(permitSignature);
    await relay.write({
      address: chain.deployment.usdcAddress,
      abi: TestUSDCAbi,
      functionName: 'permit',
      args: [owner.address, spender.address, 5n, validBefore, Number(v), r, s],
    });
    const allowance = await chain.clients.publicClient.readContract({
      address: chain.deployment.usdcAddress,
      abi: TestUSDCAbi,
      functionName: 'allowance',
      args: [owner.address, spender.address],
    });
    expect(allowance).toBe(5n);
  });
});
