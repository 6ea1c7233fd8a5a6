/**
 * Gasless deposits: the wallet owner signs an EIP-3009 `ReceiveWithAuthorization` (to = the
 * payments contract) and any relayer submits `SvcPayments.depositWithAuthorization`, which pulls
 * the USDC and credits the signer (never the relayer). The random 32-byte nonce makes every
 * authorization usable once, so a resubmission after a lost answer reverts instead of paying twice.
 */
import { type Account, type Address, type Hex, parseSignature, toHex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { SvcPaymentsAbi, TestUSDCAbi } from '../contracts/index.js';
import { RECEIVE_WITH_AUTHORIZATION_TYPES } from './eip3009.js';
import type { PaymentsContract } from './paymentsContract.js';

/** A signed authorization moving `valueMicro` from `from` into its credits. */
export interface DepositAuthorization {
  from: Address;
  valueMicro: bigint;
  /** Unix seconds; the token refuses it at or before this time. */
  validAfter: bigint;
  /** Unix seconds; the token refuses it at or after this time. */
  validBefore: bigint;
  nonce: Hex;
  signature: Hex;
}

/** The token's EIP-712 domain name and version ("USD Coin"/"2" on Base, "USDC"/"2" on Base Sepolia). */
export interface TokenDomain {
  name: string;
  version: string;
}

const tokenDomains = new WeakMap<PaymentsContract, Promise<TokenDomain>>();

/** Reads (once per contract binding) the USDC EIP-712 domain name and version from the token. */
export function usdcTokenDomain(contract: PaymentsContract): Promise<TokenDomain> {
  let domain = tokenDomains.get(contract);
  if (!domain) {
    const read = (functionName: 'name' | 'version') =>
      contract.clients.publicClient.readContract({
        address: contract.usdcAddress,
        abi: TestUSDCAbi,
        functionName,
      });
    domain = Promise.all([read('name'), read('version')]).then(([name, version]) => ({
      name,
      version,
    }));
    // A failed read (RPC down) must not be remembered.
    domain.catch(() => tokenDomains.delete(contract));
    tokenDomains.set(contract, domain);
  }
  return domain;
}

/** A fresh random EIP-3009 nonce (32 bytes): never reused, so each authorization lands once. */
export function newAuthorizationNonce(): Hex {
  return toHex(crypto.getRandomValues(new Uint8Array(32)));
}

/** Signs a deposit of `valueMicro` from `owner`'s wallet into its own credits. */
export async function signDepositAuthorization(
  owner: LocalAccount,
  contract: PaymentsContract,
  fields: { valueMicro: bigint; validAfter: bigint; validBefore: bigint; nonce?: Hex },
): Promise<DepositAuthorization> {
  const token = await usdcTokenDomain(contract);
  const nonce = fields.nonce ?? newAuthorizationNonce();
  const signature = await owner.signTypedData({
    domain: {
      name: token.name,
      version: token.version,
      chainId: contract.chainId,
      verifyingContract: contract.usdcAddress,
    },
    types: RECEIVE_WITH_AUTHORIZATION_TYPES,
    primaryType: 'ReceiveWithAuthorization',
    message: {
      from: owner.address,
      to: contract.paymentsAddress,
      value: fields.valueMicro,
      validAfter: fields.validAfter,
      validBefore: fields.validBefore,
      nonce,
    },
  });
  return {
    from: owner.address,
    valueMicro: fields.valueMicro,
    validAfter: fields.validAfter,
    validBefore: fields.validBefore,
    nonce,
    signature,
  };
}

function depositArgs(auth: DepositAuthorization) {
  const { v, r, s, yParity } = parseSignature(auth.signature);
  const recovery = v !== undefined ? Number(v) : yParity + 27;
  return [
    auth.from,
    auth.valueMicro,
    auth.validAfter,
    auth.validBefore,
    auth.nonce,
    recovery,
    r,
    s,
  ] as const;
}

/** Submits the authorization from `submitter` (who pays the gas); credits go to `auth.from`. */
export async function submitDepositAuthorization(
  contract: PaymentsContract,
  submitter: Account,
  auth: DepositAuthorization,
): Promise<void> {
  await contract.clients.senderFor(submitter).write({
    address: contract.paymentsAddress,
    abi: SvcPaymentsAbi,
    functionName: 'depositWithAuthorization',
    args: depositArgs(auth),
  });
}

/** True once the token has consumed (or the owner cancelled) the authorization's nonce. */
export async function isAuthorizationUsed(
  contract: PaymentsContract,
  auth: Pick<DepositAuthorization, 'from' | 'nonce'>,
): Promise<boolean> {
  return contract.clients.publicClient.readContract({
    address: contract.usdcAddress,
    abi: TestUSDCAbi,
    functionName: 'authorizationState',
    args: [auth.from, auth.nonce],
  });
}

/**
 * Wei `submitter` should hold to submit the deposit: estimated gas x max fee per gas, doubled
 * (fee spikes, and the L1 data fee OP-stack chains such as Base add on top of L2 gas).
 */
export async function depositAuthorizationGasWei(
  contract: PaymentsContract,
  submitter: Address,
  auth: DepositAuthorization,
): Promise<bigint> {
  const client = contract.clients.publicClient;
  const [gas, fees] = await Promise.all([
    client.estimateContractGas({
      address: contract.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'depositWithAuthorization',
      args: depositArgs(auth),
      account: submitter,
    }),
    client.estimateFeesPerGas(),
  ]);
  const perGas = fees.maxFeePerGas ?? fees.gasPrice ?? 0n;
  return gas * perGas * 2n;
}

/** ETH (wei) held by `address`. */
export async function ethBalanceOf(contract: PaymentsContract, address: Address): Promise<bigint> {
  return contract.clients.publicClient.getBalance({ address });
}
