/** Connects to the configured chain: RPC with fallbacks, and where the contracts are. */
import type { Address } from 'viem';
import type { ChainConfig } from '../config/index.js';
import { SvcError } from '../errors/index.js';
import { type ChainClients, createChainClients } from './clients.js';
import { readDeployment } from './deployment.js';
import { NETWORKS } from './networks.js';
import { PaymentsContract } from './paymentsContract.js';

export interface ConnectedChain {
  clients: ChainClients;
  contract: PaymentsContract;
  /** The primary RPC URL (for messages). */
  rpcUrl: string;
}

/**
 * Resolves the chain from config: for `local`, addresses (and the RPC URL unless configured)
 * come from `<data-dir>/chain/deployment.json`; for Base, USDC is Circle's and the payments
 * contract is `chain.paymentsAddress`. Does no network I/O.
 */
export function connectChain(config: ChainConfig, dataDir: string): ConnectedChain {
  const info = NETWORKS[config.network];
  const deployment = config.network === 'local' ? readDeployment(dataDir) : undefined;
  const primary = config.rpcUrl ?? deployment?.rpcUrl ?? info.defaultRpcUrl;
  const rpcUrls = [primary, ...config.fallbackRpcUrls];
  const paymentsAddress =
    (config.paymentsAddress as Address | undefined) ?? deployment?.paymentsAddress;
  const usdcAddress =
    (config.usdcAddress as Address | undefined) ?? deployment?.usdcAddress ?? info.usdcAddress;
  if (!paymentsAddress || !usdcAddress) {
    throw new SvcError('chain_unavailable', {
      message:
        config.network === 'local'
          ? 'No local chain deployment found: start one with `svc chain start` (or `svc up`).'
          : `chain.paymentsAddress is not set for ${config.network}: run \`svc config set chain.paymentsAddress 0x...\`.`,
      details: { network: config.network },
    });
  }
  const clients = createChainClients({
    network: config.network,
    rpcUrls,
    chainId: deployment?.chainId,
  });
  // Local grace periods vary (`svc chain start --grace`): known only for the deployment's own contract.
  const expectedGrace =
    config.network === 'local'
      ? deployment?.paymentsAddress.toLowerCase() === paymentsAddress.toLowerCase()
        ? deployment.gracePeriodSeconds
        : undefined
      : info.gracePeriodSeconds;
  return {
    clients,
    contract: new PaymentsContract(clients, paymentsAddress, usdcAddress, expectedGrace),
    rpcUrl: primary,
  };
}
