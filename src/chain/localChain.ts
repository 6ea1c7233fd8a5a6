/** A local chain for development and tests: anvil + freshly deployed contracts + a faucet. */
import { type Address, type Hex, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { TestUSDCAbi } from '../contracts/index.js';
import { type AnvilProcess, startAnvil } from './anvil.js';
import { type ChainClients, createChainClients } from './clients.js';
import { type Deployment, deployContracts, readDeployment, writeDeployment } from './deployment.js';
import { PaymentsContract } from './paymentsContract.js';

/** Anvil's first well-known development key (public knowledge; holds test ETH only). */
export const ANVIL_DEPLOYER_KEY: Hex =
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

export interface StartLocalChainOptions {
  port?: number;
  stateFile?: string;
  /** When set, the deployment is written to `<dataDir>/chain/deployment.json`. */
  dataDir?: string;
  gracePeriodSeconds?: number;
}

export interface LocalChain {
  anvil: AnvilProcess;
  rpcUrl: string;
  clients: ChainClients;
  deployment: Deployment;
  contract: PaymentsContract;
  /** Mints test USDC (micro) and sends ETH (wei) to `address`. */
  faucet(address: Address, amounts: { usdcMicro?: bigint; ethWei?: bigint }): Promise<void>;
  /** Moves chain time forward (anvil only) and mines a block. */
  increaseTime(seconds: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts anvil and deploys the contracts (or reuses them when a state file already holds them). */
export async function startLocalChain(options: StartLocalChainOptions = {}): Promise<LocalChain> {
  const anvil = await startAnvil({ port: options.port ?? 0, stateFile: options.stateFile });
  try {
    const clients = createChainClients({
      network: 'local',
      rpcUrls: [anvil.rpcUrl],
      chainId: anvil.chainId,
    });
    const deployer = clients.senderFor(privateKeyToAccount(ANVIL_DEPLOYER_KEY));
    let deployment: Deployment | undefined;
    const previous = options.dataDir ? readDeployment(options.dataDir) : undefined;
    if (options.stateFile && previous) {
      const code = await clients.publicClient.getCode({ address: previous.paymentsAddress });
      if (code && code !== '0x') deployment = { ...previous, rpcUrl: anvil.rpcUrl };
    }
    deployment ??= await deployContracts(deployer, {
      chainId: anvil.chainId,
      rpcUrl: anvil.rpcUrl,
      gracePeriodSeconds: options.gracePeriodSeconds,
    });
    if (options.dataDir) writeDeployment(options.dataDir, deployment);
    const contract = new PaymentsContract(
      clients,
      deployment.paymentsAddress,
      deployment.usdcAddress,
      deployment.gracePeriodSeconds,
    );
    return {
      anvil,
      rpcUrl: anvil.rpcUrl,
      clients,
      deployment,
      contract,
      faucet: (address, amounts) => runFaucet(clients, deployment, address, amounts),
      async increaseTime(seconds) {
        await clients.publicClient.request({
          method: 'evm_increaseTime' as 'eth_chainId',
          params: [seconds] as unknown as undefined,
        });
        await clients.publicClient.request({ method: 'evm_mine' as 'eth_chainId' });
      },
      stop: () => anvil.stop(),
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

/** Mints test USDC and sends ETH from anvil's first account (local chains only). */
export async function runFaucet(
  clients: ChainClients,
  deployment: Deployment,
  address: Address,
  amounts: { usdcMicro?: bigint; ethWei?: bigint },
): Promise<void> {
  const deployer = clients.senderFor(privateKeyToAccount(ANVIL_DEPLOYER_KEY));
  if (amounts.usdcMicro && amounts.usdcMicro > 0n) {
    await deployer.write({
      address: deployment.usdcAddress,
      abi: TestUSDCAbi,
      functionName: 'mint',
      args: [address, amounts.usdcMicro],
    });
  }
  if (amounts.ethWei && amounts.ethWei > 0n) await deployer.sendValue(address, amounts.ethWei);
}

/** Gas money a test or dev wallet gets by default. */
export const DEFAULT_FAUCET_ETH = parseEther('1');
