/**
 * Test support: anvil started as Base Sepolia (chain id 84532) with a USDC-like token placed at
 * Circle's Base Sepolia USDC address (`anvil_setCode`), so `svc chain deploy` and `verify` take
 * the path they take on the real network: same chain id, same USDC address, no test token deployed.
 */
import { type Address, type Hex, numberToHex } from 'viem';
import { TestUSDCAbi, TestUSDCDeployedBytecode } from '../contracts/index.js';
import { type AnvilProcess, startAnvil } from './anvil.js';
import { type ChainClients, createChainClients } from './clients.js';
import { NETWORKS } from './networks.js';

export interface AnvilBaseSepolia {
  anvil: AnvilProcess;
  rpcUrl: string;
  /** Circle's Base Sepolia USDC address, holding the test token's code. */
  usdcAddress: Address;
  clients: ChainClients;
  /** Sets an address's ETH balance (no transaction). */
  setBalance(address: Address, wei: bigint): Promise<void>;
  /** Calls an anvil JSON-RPC method. */
  rpc(method: string, params: unknown[]): Promise<unknown>;
  stop(): Promise<void>;
}

/** Starts anvil as chain 84532 with the test token's code at Circle's USDC address. */
export async function startAnvilBaseSepolia(
  options: { blockTimeSeconds?: number } = {},
): Promise<AnvilBaseSepolia> {
  const info = NETWORKS['base-sepolia'];
  const anvil = await startAnvil({
    chainId: info.chain.id,
    ...(options.blockTimeSeconds !== undefined
      ? { blockTimeSeconds: options.blockTimeSeconds }
      : {}),
  });
  const clients = createChainClients({ network: 'base-sepolia', rpcUrls: [anvil.rpcUrl] });
  const rpc = (method: string, params: unknown[]) =>
    clients.publicClient.request({
      method: method as 'eth_chainId',
      params: params as unknown as undefined,
    });
  const usdcAddress = info.usdcAddress as Address;
  try {
    await rpc('anvil_setCode', [usdcAddress, TestUSDCDeployedBytecode]);
    const name = await clients.publicClient.readContract({
      address: usdcAddress,
      abi: TestUSDCAbi,
      functionName: 'symbol',
    });
    if (name !== 'USDC') throw new Error(`the token at ${usdcAddress} answers symbol ${name}`);
  } catch (error) {
    await anvil.stop();
    throw error;
  }
  return {
    anvil,
    rpcUrl: anvil.rpcUrl,
    usdcAddress,
    clients,
    async setBalance(address, wei) {
      await rpc('anvil_setBalance', [address, numberToHex(wei) as Hex]);
    },
    rpc,
    stop: () => anvil.stop(),
  };
}
