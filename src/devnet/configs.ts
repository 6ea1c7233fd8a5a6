/** The config files `svc up` writes for its components (managed: rewritten on every start). */
import { join } from 'node:path';
import type { Deployment } from '../chain/index.js';
import { ensureDir, writeConfigFile } from '../config/index.js';
import type { DevSeller } from './sellers.js';

/** The dev buyer admits sellers without on-chain history; `svc up` says so when it starts. */
export const DEV_MIN_TRUST_SCORE = 0;

/** Dev sellers settle vouchers this long after a channel goes quiet (product default: 600 s). */
export const DEV_SETTLE_IDLE_SECONDS = 20;

/** The dev buyer deposits arriving wallet USDC this often (product default: 15 s). */
export const DEV_SWEEP_INTERVAL_SECONDS = 2;

function chainSection(rpcUrl: string, deployment: Deployment) {
  return {
    network: 'local' as const,
    rpcUrl,
    paymentsAddress: deployment.paymentsAddress,
    usdcAddress: deployment.usdcAddress,
  };
}

function write(dir: string, config: Record<string, unknown>): void {
  ensureDir(dir);
  writeConfigFile(join(dir, 'config.json'), config, dir);
}

export function writeBootstrapConfig(dir: string, port: number): void {
  write(dir, { network: { listen: [`/ip4/127.0.0.1/tcp/${port}`] } });
}

export function writeSellerConfig(
  dir: string,
  seller: DevSeller,
  bootstrap: string,
  rpcUrl: string,
  deployment: Deployment,
): void {
  write(dir, {
    seller: { displayName: seller.displayName, providers: seller.providers },
    network: {
      bootstrap: [bootstrap],
      listen: ['/ip4/127.0.0.1/tcp/0'],
      refreshIntervalSeconds: 30,
    },
    // Settle soon after traffic stops, so a developer sees the seller's balance grow on chain.
    chain: {
      ...chainSection(rpcUrl, deployment),
      payments: { settleIdleSeconds: DEV_SETTLE_IDLE_SECONDS },
    },
  });
}

export function writeBuyerConfig(
  dir: string,
  {
    ports,
    bootstrap,
    rpcUrl,
    deployment,
    audit,
  }: {
    ports: { buyer: number; gateway: number; facilitator: number };
    bootstrap: string;
    rpcUrl: string;
    deployment: Deployment;
    /** The buyer's audit settings (`svc up --substitute` watches every answer). */
    audit?: Record<string, unknown> | undefined;
  },
): void {
  write(dir, {
    buyer: {
      port: ports.buyer,
      routingPreferences: { minTrustScore: DEV_MIN_TRUST_SCORE },
      ...(audit ? { audit } : {}),
    },
    gateway: {
      port: ports.gateway,
      x402Facilitator: `http://127.0.0.1:${ports.facilitator}`,
    },
    network: {
      bootstrap: [bootstrap],
      listen: ['/ip4/127.0.0.1/tcp/0'],
      refreshIntervalSeconds: 15,
    },
    // Sweep wallet USDC (e.g. an x402 top-up) into credits within seconds on the dev network.
    chain: {
      ...chainSection(rpcUrl, deployment),
      payments: { sweepIntervalSeconds: DEV_SWEEP_INTERVAL_SECONDS },
    },
  });
}

/** The indexer crawls the dev network and reads the dev chain. */
export function writeIndexerConfig(
  dir: string,
  bootstrap: string,
  rpcUrl: string,
  deployment: Deployment,
): void {
  write(dir, { network: { bootstrap: [bootstrap] }, chain: chainSection(rpcUrl, deployment) });
}

/** The x402 payer's data dir only needs to know the chain (to read its USDC and sign for it). */
export function writePayerConfig(dir: string, rpcUrl: string, deployment: Deployment): void {
  write(dir, { chain: chainSection(rpcUrl, deployment) });
}
