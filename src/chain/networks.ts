/** The chains svc can pay on: a local anvil, Base Sepolia and Base, with their official USDC. */
import type { Address, Chain } from 'viem';
import { base, baseSepolia, foundry } from './chainDefinitions.js';

export type ChainNetwork = 'local' | 'base-sepolia' | 'base';

export interface NetworkInfo {
  network: ChainNetwork;
  chain: Chain;
  /** Circle's USDC on that chain; undefined for `local` (deployed by `svc chain start`). */
  usdcAddress?: Address;
  /** Default RPC URL when the config names none. */
  defaultRpcUrl: string;
  /**
   * The payments contract's grace period on that chain (`svc chain deploy` deploys with it and
   * `svc chain verify` expects it); undefined for `local`, where `svc chain start --grace` sets it.
   */
  gracePeriodSeconds?: number;
}

/** Default RPC of the local chain started by `svc chain start`. */
export const LOCAL_RPC_URL = 'http://127.0.0.1:8545';

/**
 * A day between a buyer's close request and its reclaim on Base: a seller that was offline
 * overnight still settles what it was paid (docs/decisions/176-deploy-and-verify-on-base.md).
 */
const BASE_GRACE_PERIOD_SECONDS = 86_400;

// Chain ids: Base's "Network information" page, https://docs.base.org/base-chain/quickstart/connecting-to-base
// (Base 8453, Base Sepolia 84532). USDC: Circle's "USDC contract addresses",
// https://developers.circle.com/stablecoins/usdc-contract-addresses (Base
// 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913, Base Sepolia 0x036CbD53842c5426634e7929541eC2318f3dCF7e).
export const NETWORKS: Record<ChainNetwork, NetworkInfo> = {
  local: { network: 'local', chain: foundry, defaultRpcUrl: LOCAL_RPC_URL },
  'base-sepolia': {
    network: 'base-sepolia',
    chain: baseSepolia,
    usdcAddress: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    defaultRpcUrl: 'https://sepolia.base.org',
    gracePeriodSeconds: BASE_GRACE_PERIOD_SECONDS,
  },
  base: {
    network: 'base',
    chain: base,
    usdcAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    defaultRpcUrl: 'https://mainnet.base.org',
    gracePeriodSeconds: BASE_GRACE_PERIOD_SECONDS,
  },
};

/** The Base network with this chain id, or undefined (svc deploys only to Base and Base Sepolia). */
export function baseNetworkOfChainId(chainId: number): 'base' | 'base-sepolia' | undefined {
  if (chainId === NETWORKS.base.chain.id) return 'base';
  if (chainId === NETWORKS['base-sepolia'].chain.id) return 'base-sepolia';
  return undefined;
}
