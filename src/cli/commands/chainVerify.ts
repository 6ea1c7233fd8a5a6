/** `svc chain verify`: is the contract at an address this version's SvcPayments? (docs/decisions/176) */
import type { Address } from 'viem';
import { connectChain, PaymentsContract, resolveBaseTarget } from '../../chain/index.js';
import { errorFirstLine, SvcError } from '../../errors/index.js';
import {
  checkPaymentsContract,
  type PaymentsContractCheck,
  paymentsContractMismatch,
} from '../../payments/index.js';
import type { CliContext } from '../context.js';
import type { CliIo } from '../io.js';
import { printJson } from '../output.js';
import { parseContractAddress } from './chainAddress.js';

export interface VerifyFlags {
  network?: string;
  usdc?: string;
}

/** The contract binding to check: the configured chain, or the `--network` one. */
async function contractToCheck(
  ctx: CliContext,
  address: Address,
  flags: VerifyFlags,
): Promise<{ contract: PaymentsContract; label: string }> {
  const config = ctx.loadConfig().config.chain;
  const usdc = parseContractAddress(flags.usdc);
  if (flags.network === undefined) {
    const connected = connectChain(
      { ...config, paymentsAddress: address, ...(usdc ? { usdcAddress: usdc } : {}) },
      ctx.dataDir,
    );
    return { contract: connected.contract, label: `${config.network}, ${connected.rpcUrl}` };
  }
  const target = await resolveBaseTarget(flags.network, config, usdc);
  return {
    contract: new PaymentsContract(
      target.clients,
      address,
      target.usdcAddress,
      target.gracePeriodSeconds,
    ),
    label: `${target.network}, ${target.clients.rpcUrls[0]}`,
  };
}

function row(label: string, actual: string, expected: string, ok: boolean): string {
  return `  ${label.padEnd(15)} ${ok ? 'ok     ' : 'DIFFERS'} ${actual}${ok ? '' : ` (expected ${expected})`}\n`;
}

function report(check: PaymentsContractCheck, label: string): string {
  const { chainId, code, usdcAddress, gracePeriodSeconds, domainSeparator } = check;
  const usdcOk =
    usdcAddress.actual !== undefined &&
    usdcAddress.actual.toLowerCase() === usdcAddress.expected.toLowerCase();
  const graceOk =
    gracePeriodSeconds.actual !== undefined &&
    (gracePeriodSeconds.expected === undefined ||
      gracePeriodSeconds.actual === gracePeriodSeconds.expected);
  const show = (value: string | number | undefined, unit = '') =>
    value === undefined ? 'unreadable' : `${value}${unit}`;
  return (
    `SvcPayments at ${check.paymentsAddress} (${label})\n` +
    row(
      'chain id',
      String(chainId.actual),
      String(chainId.expected),
      chainId.actual === chainId.expected,
    ) +
    row(
      'code',
      `${code.actualBytes} bytes`,
      `this version's ${code.expectedBytes} bytes`,
      code.matches,
    ) +
    row('usdc', show(usdcAddress.actual), usdcAddress.expected, usdcOk) +
    row(
      'grace period',
      show(gracePeriodSeconds.actual, ' s'),
      `${gracePeriodSeconds.expected} s`,
      graceOk,
    ) +
    row(
      'EIP-712 domain',
      show(domainSeparator.actual),
      domainSeparator.expected,
      domainSeparator.actual === domainSeparator.expected,
    )
  );
}

export async function runVerify(
  ctx: CliContext,
  io: CliIo,
  addressText: string,
  flags: VerifyFlags,
) {
  const address = parseContractAddress(addressText);
  const { contract, label } = await contractToCheck(ctx, address, flags);
  let check: PaymentsContractCheck;
  try {
    check = await checkPaymentsContract(contract);
  } catch (error) {
    throw new SvcError('chain_unavailable', {
      message: `The chain does not answer at ${contract.clients.rpcUrls[0]}: ${errorFirstLine(error)}`,
      cause: error,
    });
  }
  if (ctx.json) printJson(io, { ...check, matches: check.differences.length === 0 });
  else io.stdout(report(check, label));
  if (check.differences.length > 0) throw paymentsContractMismatch(check);
  if (!ctx.json) io.stdout("verified: this version's SvcPayments\n");
}
