/**
 * The three chains svc pays on, defined here instead of imported from `viem/chains`: that entry
 * point loads every chain viem knows (about 1,150 modules, ~50 MiB of RSS in every process that
 * touches the chain layer, the buyer included). Base and Base Sepolia take viem's OP-stack
 * config (formatters, serializers, L2 predeploys) as viem's own definitions do;
 * `chainDefinitions.test.ts` checks them against `viem/chains`.
 */
import { type Chain, defineChain } from 'viem';
import { chainConfig } from 'viem/op-stack';

const MULTICALL3 = '0xca11bde05977b3631167028862be2a173976ca11';

export const base: Chain = defineChain({
  ...chainConfig,
  id: 8453,
  name: 'Base',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['https://mainnet.base.org'] } },
  blockExplorers: {
    default: {
      name: 'Basescan',
      url: 'https://basescan.org',
      apiUrl: 'https://api.basescan.org/api',
    },
  },
  contracts: {
    ...chainConfig.contracts,
    multicall3: { address: MULTICALL3, blockCreated: 5022 },
  },
  sourceId: 1,
});

export const baseSepolia: Chain = defineChain({
  ...chainConfig,
  id: 84532,
  name: 'Base Sepolia',
  nativeCurrency: { name: 'Sepolia Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['https://sepolia.base.org'] } },
  blockExplorers: {
    default: {
      name: 'Basescan',
      url: 'https://sepolia.basescan.org',
      apiUrl: 'https://api-sepolia.basescan.org/api',
    },
  },
  contracts: {
    ...chainConfig.contracts,
    multicall3: { address: MULTICALL3, blockCreated: 1059647 },
  },
  testnet: true,
  sourceId: 11_155_111,
});

/** Anvil's default chain (`svc chain start`). */
export const foundry: Chain = defineChain({
  id: 31_337,
  name: 'Foundry',
  nativeCurrency: { decimals: 18, name: 'Ether', symbol: 'ETH' },
  rpcUrls: {
    default: { http: ['http://127.0.0.1:8545'], webSocket: ['ws://127.0.0.1:8545'] },
  },
});
