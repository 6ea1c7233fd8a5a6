/** `chain` section: where deposits and payment channels live. */
import { z } from 'zod';

export const CHAIN_NETWORKS = ['local', 'base-sepolia', 'base'] as const;

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed address');

export const chainSchema = z.strictObject({
  network: z.enum(CHAIN_NETWORKS).default('local'),
  /** RPC URL; for `local` the default is the anvil started by `svc chain start` / `svc up`. */
  rpcUrl: z.url().optional(),
  /** Further RPC URLs tried in order when the first fails. */
  fallbackRpcUrls: z.array(z.url()).default([]),
  /** Payments contract; for `local` it is read from the deployment file. */
  paymentsAddress: address.optional(),
  /** USDC token; defaults to the network's official USDC. */
  usdcAddress: address.optional(),
});

export type ChainConfig = z.infer<typeof chainSchema>;
