/**
 * What `svc chain deploy` does: the payments contract on Base or Base Sepolia (docs/decisions/176).
 * Loaded when the command runs; chain.ts registers it.
 */
import { type Address, formatEther } from 'viem';
import {
  type BaseTarget,
  type DeploymentPlan,
  describeGasPrice,
  describeWei,
  PaymentsContract,
  planPaymentsDeployment,
  resolveBaseTarget,
  sendPaymentsDeployment,
  writeDeployment,
} from '../../chain/index.js';
import { SvcError } from '../../errors/index.js';
import { MoneyFormatError, parseUsd } from '../../money/index.js';
import { checkPaymentsContract, paymentsContractMismatch } from '../../payments/index.js';
import type { CliContext } from '../context.js';
import type { CliIo } from '../io.js';
import { parseIntOption } from '../options.js';
import { printJson } from '../output.js';
import { parseContractAddress } from './chainAddress.js';

export interface DeployFlags {
  network: string;
  identity: string;
  usdc?: string;
  dryRun?: boolean;
  confirmations: string;
  ethUsd: string;
}

/** `--eth-usd`: a positive USD amount. */
function parseEthUsd(text: string): string {
  try {
    if (parseUsd(text) > 0n) return text;
  } catch (error) {
    if (!(error instanceof MoneyFormatError)) throw error;
  }
  throw new SvcError('invalid_argument', {
    message: `--eth-usd: expected a positive USD amount like 3000, got "${text}"`,
  });
}

function planLines(target: BaseTarget, plan: DeploymentPlan, ethUsd: string): string {
  const l1 =
    plan.l1FeeWei === undefined
      ? 'none (this chain has no L1 fee oracle)'
      : `${formatEther(plan.l1FeeWei)} ETH`;
  return (
    `deploy SvcPayments to ${target.network} (chain ${plan.chainId})\n` +
    `  from          ${plan.from} (nonce ${plan.nonce})\n` +
    `  constructor   usdc ${plan.usdcAddress}, grace ${plan.gracePeriodSeconds} s\n` +
    `  data          ${(plan.data.length - 2) / 2} bytes of creation code and arguments\n` +
    `  gas           ${plan.gasEstimate} estimated, limit ${plan.gasLimit}\n` +
    `  gas price     ${describeGasPrice(plan.gasPriceWei)} now (max fee ${describeGasPrice(plan.maxFeePerGasWei)}, tip ${describeGasPrice(plan.maxPriorityFeePerGasWei)})\n` +
    `  L1 data fee   ${l1}\n` +
    `  cost          ${describeWei(plan.costWei, ethUsd)}\n` +
    `  wallet needs  ${describeWei(plan.requiredWei, ethUsd)} (gas limit × max fee)\n` +
    `  wallet holds  ${formatEther(plan.balanceWei)} ETH\n`
  );
}

function noGasError(target: BaseTarget, plan: DeploymentPlan, ethUsd: string): SvcError {
  return new SvcError('deployer_gas_unavailable', {
    message: `The deployer ${plan.from} holds ${formatEther(plan.balanceWei)} ETH on ${target.network}; deploying SvcPayments needs ${describeWei(plan.requiredWei, ethUsd)} (${plan.gasLimit} gas at up to ${describeGasPrice(plan.maxFeePerGasWei)}). Send at least ${formatEther(plan.requiredWei - plan.balanceWei)} ETH to ${plan.from} and run again.`,
    details: {
      deployer: plan.from,
      balanceWei: plan.balanceWei.toString(),
      requiredWei: plan.requiredWei.toString(),
    },
  });
}

/** The config lines buyers and sellers run to use the contract. */
function configLines(target: BaseTarget, paymentsAddress: Address, usdcGiven: boolean): string[] {
  return [
    `svc config set chain.network ${target.network}`,
    `svc config set chain.paymentsAddress ${paymentsAddress}`,
    ...(usdcGiven ? [`svc config set chain.usdcAddress ${target.usdcAddress}`] : []),
  ];
}

export async function runDeploy(ctx: CliContext, io: CliIo, flags: DeployFlags): Promise<void> {
  const ethUsd = parseEthUsd(flags.ethUsd);
  const confirmations = parseIntOption(flags.confirmations, '--confirmations', 1, 64);
  const usdc = parseContractAddress(flags.usdc);
  const config = ctx.loadConfig().config.chain;
  const account = (await ctx.identities()).load(flags.identity).account;
  const target = await resolveBaseTarget(flags.network, config, usdc);
  const plan = await planPaymentsDeployment(target, account.address);
  if (flags.dryRun) {
    if (ctx.json) printJson(io, { network: target.network, dryRun: true, ethUsd, ...plan });
    else {
      io.stdout(planLines(target, plan, ethUsd));
      io.stdout('dry run: nothing was sent\n');
    }
    return;
  }
  if (plan.balanceWei < plan.requiredWei) throw noGasError(target, plan, ethUsd);
  if (!ctx.json) io.stdout(planLines(target, plan, ethUsd));
  const deployed = await sendPaymentsDeployment(target, account, plan, confirmations);
  // What landed is checked like any configured contract: a node that lies about the code fails here.
  const check = await checkPaymentsContract(
    new PaymentsContract(
      target.clients,
      deployed.paymentsAddress,
      target.usdcAddress,
      target.gracePeriodSeconds,
    ),
  );
  if (check.differences.length > 0) throw paymentsContractMismatch(check);
  const path = writeDeployment(ctx.dataDir, {
    network: target.network,
    chainId: plan.chainId,
    rpcUrl: target.clients.rpcUrls[0]!,
    usdcAddress: target.usdcAddress,
    paymentsAddress: deployed.paymentsAddress,
    gracePeriodSeconds: target.gracePeriodSeconds,
    deployedAt: new Date().toISOString(),
    deployer: account.address,
    transactionHash: deployed.transactionHash,
    blockNumber: Number(deployed.blockNumber),
  });
  const lines = configLines(target, deployed.paymentsAddress, usdc !== undefined);
  if (ctx.json) {
    printJson(io, { network: target.network, ...deployed, deploymentFile: path, config: lines });
    return;
  }
  io.stdout(
    `deployed SvcPayments at ${deployed.paymentsAddress}\n` +
      `  transaction   ${deployed.transactionHash} (block ${deployed.blockNumber}, ${confirmations} confirmation(s))\n` +
      `  gas used      ${deployed.gasUsed}, paid ${describeWei(deployed.paidWei, ethUsd)}\n` +
      `  verified      code, USDC, grace period and EIP-712 domain match this version\n` +
      `  written       ${path}\n` +
      `buyers and sellers configure it with:\n${lines.map((line) => `  ${line}\n`).join('')}`,
  );
}
