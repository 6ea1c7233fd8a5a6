/**
 * Is the contract at an address this version's SvcPayments, on the expected chain, over the
 * expected USDC, with the expected grace period and the EIP-712 domain buyers sign under?
 * `svc chain verify`, `svc chain deploy` (after deploying) and every buyer and seller at start
 * ask (docs/decisions/176-deploy-and-verify-on-base.md): a buyer deposits into, and signs for,
 * only a contract that is ours, whatever address a config file names.
 */
import { type Address, bytesToHex, type Hex, hexToBytes, isAddressEqual } from 'viem';
import type { PaymentsContract } from '../chain/index.js';
import {
  SvcPaymentsAbi,
  SvcPaymentsDeployedBytecode,
  SvcPaymentsImmutableRanges,
} from '../contracts/index.js';
import { SvcError } from '../errors/index.js';
import { paymentsDomainSeparator } from './signatures.js';

/** What was expected and found, field by field; `differences` is empty when the contract is ours. */
export interface PaymentsContractCheck {
  paymentsAddress: Address;
  /** One sentence per field that differs. */
  differences: string[];
  chainId: { expected: number; actual: number };
  code: { expectedBytes: number; actualBytes: number; matches: boolean };
  usdcAddress: { expected: Address; actual: Address | undefined };
  /** `expected` undefined: not checked (a local chain whose deployment file is not this contract's). */
  gracePeriodSeconds: { expected: number | undefined; actual: number | undefined };
  domainSeparator: { expected: Hex; actual: Hex | undefined };
}

const EXPECTED_CODE = hexToBytes(SvcPaymentsDeployedBytecode);

/**
 * Why `code` is not this version's SvcPayments runtime code, or undefined when it is. The
 * constructor writes immutables (the USDC address, the grace period) into the runtime code, so
 * those bytes are left out of the comparison; each immutable must hold one value wherever it
 * appears, or code built by another constructor could pay out through another token.
 */
function codeDifference(code: Uint8Array): string | undefined {
  if (code.length === 0) return 'the address holds no contract';
  if (code.length !== EXPECTED_CODE.length) {
    return `its code is ${code.length} bytes, this version's SvcPayments is ${EXPECTED_CODE.length}`;
  }
  const masked = code.slice();
  const values = new Map<number, Hex>();
  for (const range of SvcPaymentsImmutableRanges) {
    const end = range.start + range.length;
    const value = bytesToHex(code.subarray(range.start, end));
    const seen = values.get(range.id);
    if (seen !== undefined && seen !== value) {
      return `its code holds two values for one immutable (byte ${range.start}): not written by this version's constructor`;
    }
    values.set(range.id, value);
    masked.fill(0, range.start, end);
  }
  const at = masked.findIndex((byte, index) => byte !== EXPECTED_CODE[index]);
  return at === -1 ? undefined : `its code differs from this version's SvcPayments at byte ${at}`;
}

/** A read of the contract, or undefined when it reverts (code that is not ours may not answer). */
async function readOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch {
    return undefined;
  }
}

/**
 * Compares the contract `contract` points at with this version's artifact and the node's
 * expectations (its chain id, USDC address and grace period). Throws what the RPC throws when the
 * chain does not answer.
 */
export async function checkPaymentsContract(
  contract: PaymentsContract,
): Promise<PaymentsContractCheck> {
  const { publicClient } = contract.clients;
  const address = contract.paymentsAddress;
  const expectedChainId = contract.chainId;
  const read = <name extends 'usdc' | 'gracePeriod' | 'DOMAIN_SEPARATOR'>(functionName: name) =>
    readOrUndefined(() =>
      publicClient.readContract({ address, abi: SvcPaymentsAbi, functionName }),
    );
  const [actualChainId, code, usdc, grace, domain] = await Promise.all([
    publicClient.getChainId(),
    publicClient.getCode({ address }),
    read('usdc'),
    read('gracePeriod'),
    read('DOMAIN_SEPARATOR'),
  ]);
  const codeBytes = hexToBytes(code ?? '0x');
  const check: PaymentsContractCheck = {
    paymentsAddress: address,
    differences: [],
    chainId: { expected: expectedChainId, actual: actualChainId },
    code: {
      expectedBytes: EXPECTED_CODE.length,
      actualBytes: codeBytes.length,
      matches: false,
    },
    usdcAddress: { expected: contract.usdcAddress, actual: usdc },
    gracePeriodSeconds: {
      expected: contract.expectedGracePeriodSeconds,
      actual: grace === undefined ? undefined : Number(grace),
    },
    domainSeparator: {
      expected: paymentsDomainSeparator({ chainId: expectedChainId, paymentsAddress: address }),
      actual: domain,
    },
  };
  const differences = check.differences;
  if (actualChainId !== expectedChainId) {
    differences.push(`the RPC is on chain ${actualChainId}, not ${expectedChainId}`);
  }
  const codeProblem = codeDifference(codeBytes);
  check.code.matches = codeProblem === undefined;
  if (codeProblem) differences.push(codeProblem);
  // Other code answers the reads below by chance or not at all: the sentence above says it all
  // (the fields are still in the check for `svc chain verify` to show).
  if (codeProblem) return check;
  if (usdc === undefined) differences.push('its USDC address cannot be read');
  else if (!isAddressEqual(usdc, contract.usdcAddress)) {
    differences.push(`its USDC is ${usdc}, not ${contract.usdcAddress}`);
  }
  const expectedGrace = check.gracePeriodSeconds.expected;
  const actualGrace = check.gracePeriodSeconds.actual;
  if (actualGrace === undefined) differences.push('its grace period cannot be read');
  else if (expectedGrace !== undefined && actualGrace !== expectedGrace) {
    differences.push(`its grace period is ${actualGrace} s, not ${expectedGrace} s`);
  }
  if (domain === undefined) differences.push('its EIP-712 domain cannot be read');
  else if (domain !== check.domainSeparator.expected) {
    differences.push(
      `its EIP-712 domain is not SvcPayments v1 on chain ${expectedChainId} at ${address}, so signatures for it would not count`,
    );
  }
  return check;
}

/** The error of a check that found differences: what differs, and what to do about it. */
export function paymentsContractMismatch(check: PaymentsContractCheck): SvcError {
  return new SvcError('payments_contract_mismatch', {
    message: `The payments contract at ${check.paymentsAddress} (chain ${check.chainId.expected}) is not this version's SvcPayments: ${check.differences.join('; ')}. Check chain.network, chain.rpcUrl, chain.paymentsAddress and chain.usdcAddress, or deploy one with \`svc chain deploy\`.`,
    details: { paymentsAddress: check.paymentsAddress, differences: check.differences },
  });
}

/**
 * Refuses a contract that is not ours: throws `payments_contract_mismatch` naming what differs.
 * RPC failures are thrown as the RPC threw them (the caller decides what an unreachable chain means).
 */
export async function assertPaymentsContract(contract: PaymentsContract): Promise<void> {
  const check = await checkPaymentsContract(contract);
  if (check.differences.length > 0) throw paymentsContractMismatch(check);
}
