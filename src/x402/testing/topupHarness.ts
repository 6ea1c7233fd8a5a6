/**
 * Test harness: anvil with the real TestUSDC, the real local facilitator over HTTP, a
 * TopupService with an in-memory ledger, and payers that sign with the official x402 client.
 */
import { x402Client } from '@x402/core/client';
import { encodePaymentSignatureHeader, HTTPFacilitatorClient } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { type Address, getAddress, type Hex } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import {
  type LocalChain,
  startLocalChain,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
} from '../../chain/index.js';
import { TestUSDCAbi } from '../../contracts/index.js';
import { parseUsd } from '../../money/index.js';
import { viemChainReader } from '../chainReader.js';
import type { TopupAsset } from '../constants.js';
import { MemoryTopupLedger } from '../ledger/MemoryTopupLedger.js';
import {
  type RunningFacilitatorServer,
  startFacilitatorServer,
} from '../server/facilitatorServer.js';
import { createLocalFacilitator } from '../server/localFacilitator.js';
import { TopupService, type TopupServiceOptions } from '../TopupService.js';
import type { TopupKey } from '../types.js';

/** Anvil's second well-known development key: the facilitator's gas account in tests. */
export const ANVIL_FACILITATOR_KEY: Hex =
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

export interface TopupHarness {
  chain: LocalChain;
  asset: TopupAsset;
  facilitatorServer: RunningFacilitatorServer;
  facilitatorClient: FacilitatorClient;
  /** A fresh service + ledger; `overrides` replace any option. */
  service(overrides?: Partial<TopupServiceOptions>): {
    service: TopupService;
    ledger: MemoryTopupLedger;
  };
  /** A key with its own new wallet, top-ups enabled. */
  newKey(overrides?: Partial<TopupKey>): TopupKey;
  /** A payer holding `usdc` test USDC. */
  newPayer(usdc: string): Promise<PrivateKeyAccount>;
  usdcBalance(owner: Address): Promise<bigint>;
  stop(): Promise<void>;
}

export async function startTopupHarness(): Promise<TopupHarness> {
  const chain = await startLocalChain();
  try {
    const local = createLocalFacilitator({
      rpcUrl: chain.rpcUrl,
      chainId: chain.anvil.chainId,
      privateKey: ANVIL_FACILITATOR_KEY,
    });
    const facilitatorServer = await startFacilitatorServer({ facilitator: local.facilitator });
    const facilitatorClient = new HTTPFacilitatorClient({
      url: facilitatorServer.url,
      timeoutMs: 20_000,
    });
    const asset: TopupAsset = {
      chainId: chain.anvil.chainId,
      address: chain.deployment.usdcAddress,
      eip712Name: 'USD Coin',
      eip712Version: '2',
    };
    const reader = viemChainReader(chain.clients.publicClient);
    let keyCounter = 0;
    return {
      chain,
      asset,
      facilitatorServer,
      facilitatorClient,
      service(overrides = {}) {
        const ledger = new MemoryTopupLedger();
        const service = new TopupService({
          ledger,
          facilitator: facilitatorClient,
          chain: reader,
          asset,
          bounds: { minMicro: parseUsd('2'), maxMicro: parseUsd('500') },
          reconcileIntervalMs: 0,
          ...overrides,
        });
        return { service, ledger: (overrides.ledger as MemoryTopupLedger | undefined) ?? ledger };
      },
      newKey(overrides = {}) {
        keyCounter += 1;
        return {
          keyId: `key_test${keyCounter}`,
          identity: `key-${keyCounter}`,
          ownWallet: true,
          walletAddress: privateKeyToAccount(generatePrivateKey()).address,
          topupEnabled: true,
          ...overrides,
        };
      },
      async newPayer(usdc) {
        const account = privateKeyToAccount(generatePrivateKey());
        await chain.faucet(account.address, { usdcMicro: parseUsd(usdc) });
        return account;
      },
      usdcBalance: (owner) =>
        chain.clients.publicClient.readContract({
          address: asset.address,
          abi: TestUSDCAbi,
          functionName: 'balanceOf',
          args: [owner],
        }) as Promise<bigint>,
      async stop() {
        await facilitatorServer.close();
        await chain.stop();
      },
    };
  } catch (error) {
    await chain.stop();
    throw error;
  }
}

/** Signs the challenge's first requirement with the official x402 client (as a real payer does). */
export async function officialPayment(
  account: PrivateKeyAccount,
  challenge: PaymentRequired,
): Promise<PaymentPayload> {
  const client = new x402Client()
    .register('eip155:*', new ExactEvmScheme(account))
    .setSpendControls(false);
  return client.createPaymentPayload(challenge);
}

export interface AuthorizationOverrides {
  to?: Address;
  value?: bigint;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: Hex;
}

/**
 * Signs an EIP-3009 authorization for `requirements` with chosen fields, for the bad-input
 * cases a well-behaved client never produces. `domain` overrides sign for another chain/token.
 */
export async function craftedPayment(
  account: PrivateKeyAccount,
  requirements: PaymentRequirements,
  overrides: AuthorizationOverrides = {},
  domain: { chainId?: number; verifyingContract?: Address } = {},
): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: account.address,
    to: overrides.to ?? getAddress(requirements.payTo),
    value: overrides.value ?? BigInt(requirements.amount),
    validAfter: overrides.validAfter ?? 0n,
    validBefore: overrides.validBefore ?? now + 300n,
    nonce:
      overrides.nonce ??
      (`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}` as Hex),
  };
  const signature = await account.signTypedData({
    domain: {
      name: String(requirements.extra.name),
      version: String(requirements.extra.version),
      chainId: domain.chainId ?? Number(requirements.network.split(':')[1]),
      verifyingContract: domain.verifyingContract ?? getAddress(requirements.asset),
    },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  return {
    x402Version: 2,
    accepted: requirements,
    payload: {
      signature,
      authorization: {
        from: authorization.from,
        to: authorization.to,
        value: authorization.value.toString(),
        validAfter: authorization.validAfter.toString(),
        validBefore: authorization.validBefore.toString(),
        nonce: authorization.nonce,
      },
    },
  };
}

/** The header value of a payload. */
export function paymentHeader(payload: PaymentPayload): string {
  return encodePaymentSignatureHeader(payload);
}
