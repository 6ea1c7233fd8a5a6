/** Where a chain's contracts live: deploying them, and `<data-dir>/chain/deployment.json`. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Address } from 'viem';
import { z } from 'zod';
import { ensureDir, writeFileAtomic } from '../config/index.js';
import {
  SvcPaymentsAbi,
  SvcPaymentsBytecode,
  TestUSDCAbi,
  TestUSDCBytecode,
} from '../contracts/index.js';
import type { ChainNetwork } from './networks.js';
import type { TxSender } from './sender.js';

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .transform((value) => value as Address);

export const deploymentSchema = z.object({
  network: z.enum(['local', 'base-sepolia', 'base']),
  chainId: z.number().int().positive(),
  rpcUrl: z.string(),
  usdcAddress: address,
  paymentsAddress: address,
  gracePeriodSeconds: z.number().int().nonnegative(),
  deployedAt: z.string(),
  /** Set by `svc chain deploy`: who deployed, in which transaction and block. */
  deployer: address.optional(),
  transactionHash: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/)
    .optional(),
  blockNumber: z.number().int().nonnegative().optional(),
});

export type Deployment = z.infer<typeof deploymentSchema>;

/** Default grace period between a buyer's requestClose and its reclaim on the local chain. */
export const LOCAL_GRACE_PERIOD_SECONDS = 3600;

/**
 * `<data-dir>/chain/deployment.json` for the local chain, `<data-dir>/chain/<network>/deployment.json`
 * for a `svc chain deploy` to Base: a deployment to Base never replaces the local one.
 */
export function deploymentPath(dataDir: string, network: ChainNetwork = 'local'): string {
  return network === 'local'
    ? join(dataDir, 'chain', 'deployment.json')
    : join(dataDir, 'chain', network, 'deployment.json');
}

/** Reads the deployment written by `svc chain start`, or undefined when there is none. */
export function readDeployment(dataDir: string): Deployment | undefined {
  const path = deploymentPath(dataDir);
  if (!existsSync(path)) return undefined;
  return deploymentSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
}

/** Writes the deployment where `deploymentPath` says for its network; returns the path. */
export function writeDeployment(dataDir: string, deployment: Deployment): string {
  const path = deploymentPath(dataDir, deployment.network);
  ensureDir(dirname(path));
  writeFileAtomic(path, `${JSON.stringify(deployment, null, 2)}\n`);
  return path;
}

/** Deploys the test USDC and the payments contract from `deployer`. */
export async function deployContracts(
  deployer: TxSender,
  options: { chainId: number; rpcUrl: string; gracePeriodSeconds?: number },
): Promise<Deployment> {
  const gracePeriodSeconds = options.gracePeriodSeconds ?? LOCAL_GRACE_PERIOD_SECONDS;
  const usdcAddress = await deployer.deploy(TestUSDCAbi, TestUSDCBytecode, []);
  const paymentsAddress = await deployer.deploy(SvcPaymentsAbi, SvcPaymentsBytecode, [
    usdcAddress,
    BigInt(gracePeriodSeconds),
  ]);
  return {
    network: 'local',
    chainId: options.chainId,
    rpcUrl: options.rpcUrl,
    usdcAddress,
    paymentsAddress,
    gracePeriodSeconds,
    deployedAt: new Date().toISOString(),
  };
}
