/**
 * `svc chain deploy`: SvcPayments alone (never a test token) on Base or Base Sepolia, against
 * Circle's USDC. The plan is what `--dry-run` prints and what is sent: the same gas limit and fees,
 * so a wallet holding the plan's `requiredWei` can always pay for it
 * (docs/decisions/176-deploy-and-verify-on-base.md).
 */
import {
  type Address,
  createPublicClient,
  createWalletClient,
  encodeDeployData,
  getAddress,
  type Hash,
  type Hex,
  http,
  type PublicClient,
} from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { estimateL1Fee } from 'viem/op-stack';
import type { ChainConfig } from '../config/index.js';
import { SvcPaymentsAbi, SvcPaymentsBytecode } from '../contracts/index.js';
import { SvcError } from '../errors/index.js';
import { type ChainClients, createChainClients } from './clients.js';
import { baseNetworkOfChainId, NETWORKS } from './networks.js';

/** Where and against what SvcPayments is deployed or verified. */
export interface BaseTarget {
  network: 'base' | 'base-sepolia';
  clients: ChainClients;
  /** Circle's USDC on that network, or `--usdc`. */
  usdcAddress: Address;
  gracePeriodSeconds: number;
}

/** The deployment transaction as it will be sent, with its cost. */
export interface DeploymentPlan {
  from: Address;
  nonce: number;
  chainId: number;
  /** Creation code and constructor arguments. */
  data: Hex;
  usdcAddress: Address;
  gracePeriodSeconds: number;
  /** The node's estimate of the gas the deployment uses. */
  gasEstimate: bigint;
  /** The estimate plus a margin: the most gas it may use. */
  gasLimit: bigint;
  maxFeePerGasWei: bigint;
  maxPriorityFeePerGasWei: bigint;
  /** The chain's gas price now (`eth_gasPrice`). */
  gasPriceWei: bigint;
  /** Base's L1 data fee for the transaction; undefined where the chain charges none (anvil). */
  l1FeeWei: bigint | undefined;
  /** What it costs at the current gas price: estimate × gas price + L1 fee. */
  costWei: bigint;
  /** What the wallet must hold for the node to take it: gas limit × max fee + L1 fee. */
  requiredWei: bigint;
  balanceWei: bigint;
}

/** A deployment landed with the wanted confirmations. */
export interface DeployedPayments {
  paymentsAddress: Address;
  transactionHash: Hash;
  blockNumber: bigint;
  gasUsed: bigint;
  /** Gas used × effective gas price + L1 fee, as the receipt says. */
  paidWei: bigint;
}

const NETWORK_NAMES = ['base-sepolia', 'base'] as const;

/** The RPC URLs svc uses for `network`: the configured ones when the config is on that network. */
function rpcUrlsFor(network: 'base' | 'base-sepolia', config: ChainConfig): string[] {
  if (config.network !== network) return [NETWORKS[network].defaultRpcUrl];
  return [config.rpcUrl ?? NETWORKS[network].defaultRpcUrl, ...config.fallbackRpcUrls];
}

async function chainIdAt(rpcUrl: string): Promise<number> {
  const client = createPublicClient({
    transport: http(rpcUrl, { retryCount: 1, timeout: 15_000 }),
  });
  try {
    return await client.getChainId();
  } catch (error) {
    throw new SvcError('chain_unavailable', {
      message: `The RPC at ${rpcUrl} does not answer: ${(error as Error).message.split('\n')[0]}`,
      cause: error,
    });
  }
}

/**
 * Resolves `--network base-sepolia|base|<rpc-url>`: an RPC URL is Base or Base Sepolia by the
 * chain id it answers (so a Base Sepolia fork on anvil is deployed to as Base Sepolia).
 * Throws `invalid_argument` for anything else, `chain_unavailable` when the URL does not answer.
 */
export async function resolveBaseTarget(
  spec: string,
  config: ChainConfig,
  usdcOverride?: Address,
): Promise<BaseTarget> {
  let network: 'base' | 'base-sepolia';
  let rpcUrls: string[];
  if ((NETWORK_NAMES as readonly string[]).includes(spec)) {
    network = spec as 'base' | 'base-sepolia';
    rpcUrls = rpcUrlsFor(network, config);
  } else if (/^https?:\/\/\S+$/.test(spec)) {
    const chainId = await chainIdAt(spec);
    const found = baseNetworkOfChainId(chainId);
    if (!found) {
      throw new SvcError('invalid_argument', {
        message: `The RPC at ${spec} is on chain ${chainId}, neither Base (8453) nor Base Sepolia (84532): svc deploys the payments contract only there. For a local chain run \`svc chain start\`.`,
      });
    }
    network = found;
    rpcUrls = [spec];
  } else {
    throw new SvcError('invalid_argument', {
      message: `--network "${spec}" is not base-sepolia, base or an http(s) RPC URL`,
    });
  }
  const info = NETWORKS[network];
  return {
    network,
    clients: createChainClients({ network, rpcUrls }),
    usdcAddress: usdcOverride ?? (info.usdcAddress as Address),
    gracePeriodSeconds: info.gracePeriodSeconds as number,
  };
}

/** A deployment's gas limit: the estimate is exact for a fresh contract; the margin covers a node that estimates low. */
function deploymentGasLimit(estimate: bigint): bigint {
  return estimate + estimate / 10n;
}

/** Base's L1 data fee for a transaction, read from the chain's GasPriceOracle when it has one. */
async function l1DataFee(
  publicClient: PublicClient,
  request: {
    account: Address;
    data: Hex;
    gas: bigint;
    nonce: number;
    maxFeePerGas: bigint;
    maxPriorityFeePerGas: bigint;
  },
): Promise<bigint | undefined> {
  const entry = publicClient.chain?.contracts?.gasPriceOracle;
  const oracle = entry && 'address' in entry ? (entry.address as Address) : undefined;
  if (!oracle) return undefined;
  const code = await publicClient.getCode({ address: oracle });
  if (!code || code === '0x') return undefined;
  return estimateL1Fee(publicClient, { ...request, chain: publicClient.chain });
}

/** Prices the deployment from `from` at the current gas price (no transaction is sent). */
export async function planPaymentsDeployment(
  target: BaseTarget,
  from: Address,
): Promise<DeploymentPlan> {
  const { publicClient, chain } = target.clients;
  const data = encodeDeployData({
    abi: SvcPaymentsAbi,
    bytecode: SvcPaymentsBytecode,
    args: [target.usdcAddress, BigInt(target.gracePeriodSeconds)],
  });
  const [nonce, gasEstimate, fees, gasPriceWei, balanceWei] = await Promise.all([
    publicClient.getTransactionCount({ address: from, blockTag: 'pending' }),
    publicClient.estimateGas({ account: from, data }),
    publicClient.estimateFeesPerGas(),
    publicClient.getGasPrice(),
    publicClient.getBalance({ address: from }),
  ]);
  const gasLimit = deploymentGasLimit(gasEstimate);
  const l1FeeWei = await l1DataFee(publicClient, {
    account: from,
    data,
    gas: gasLimit,
    nonce,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  });
  return {
    from,
    nonce,
    chainId: chain.id,
    data,
    usdcAddress: target.usdcAddress,
    gracePeriodSeconds: target.gracePeriodSeconds,
    gasEstimate,
    gasLimit,
    maxFeePerGasWei: fees.maxFeePerGas,
    maxPriorityFeePerGasWei: fees.maxPriorityFeePerGas,
    gasPriceWei,
    l1FeeWei,
    costWei: gasEstimate * gasPriceWei + (l1FeeWei ?? 0n),
    requiredWei: gasLimit * fees.maxFeePerGas + (l1FeeWei ?? 0n),
    balanceWei,
  };
}

/** Sends the planned deployment from `account` and waits for `confirmations` blocks. */
export async function sendPaymentsDeployment(
  target: BaseTarget,
  account: LocalAccount,
  plan: DeploymentPlan,
  confirmations: number,
): Promise<DeployedPayments> {
  const { publicClient, chain, transport } = target.clients;
  const wallet = createWalletClient({ account, chain, transport });
  const transactionHash = await wallet.sendTransaction({
    account,
    chain,
    data: plan.data,
    gas: plan.gasLimit,
    maxFeePerGas: plan.maxFeePerGasWei,
    maxPriorityFeePerGas: plan.maxPriorityFeePerGasWei,
    nonce: plan.nonce,
  });
  const receipt = await publicClient.waitForTransactionReceipt({
    hash: transactionHash,
    confirmations,
    pollingInterval: 500,
    timeout: 600_000,
  });
  if (receipt.status !== 'success' || !receipt.contractAddress) {
    throw new SvcError('chain_unavailable', {
      message: `The deployment transaction ${transactionHash} reverted in block ${receipt.blockNumber}.`,
    });
  }
  const l1Fee = (receipt as { l1Fee?: bigint | null }).l1Fee ?? 0n;
  return {
    paymentsAddress: getAddress(receipt.contractAddress),
    transactionHash,
    blockNumber: receipt.blockNumber,
    gasUsed: receipt.gasUsed,
    paidWei: receipt.gasUsed * receipt.effectiveGasPrice + l1Fee,
  };
}
