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
}

/** Default RPC of the local chain started by `svc chain start`. */
export const LOCAL_RPC_URL = 'http://127.0.0.1:8545';

export const NETWORKS: Record<ChainNetwork, NetworkInfo> = {
  local: { network: 'local', chain: foundry, defaultRpcUrl: LOCAL_RPC_URL },
  'base-sepolia': {
    network: 'base-sepolia',
    chain: baseSepolia,
    usdcAddress: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    defaultRpcUrl: 'https://sepolia.base.org',
  },
  base: {
    network: 'base',
    chain: base,
    usdcAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    defaultRpcUrl: 'https://mainnet.base.org',
  },
};
