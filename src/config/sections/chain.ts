/** `chain` section: where deposits and payment channels live, and how payments behave. */
import { z } from 'zod';

export const CHAIN_NETWORKS = ['local', 'base-sepolia', 'base'] as const;

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed address');
const usd = z.string().regex(/^\d+(\.\d{1,6})?$/, 'expected a USD amount like "1.50"');

/** Payment behaviour of the buyer and the seller (decisions 031, 033). */
export const paymentsSchema = z.strictObject({
  /** Lock a new channel reserves from the buyer's credits (more if one request needs more). */
  channelLockUsd: usd.default('1.00'),
  /** A seller claim more than this percentage over the buyer's token count is refused. */
  claimTolerancePercent: z.number().min(0).max(100).default(10),
  /** Plus this many tokens of slack per field (tokenizer differences on short texts). */
  claimSlackTokens: z.number().int().min(0).default(16),
  /** How often the running buyer sweeps wallet USDC into credits. */
  sweepIntervalSeconds: z.number().int().min(1).max(60).default(15),
  /**
   * Identity whose wallet pays the gas of gasless deposits for wallets holding USDC but no ETH
   * (e.g. funded by an x402 top-up); decision 080.
   */
  relayerIdentity: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/, 'expected an identity name')
    .default('default'),
  /** Seller settles once this much is unsettled... */
  settleThresholdUsd: usd.default('0.50'),
  /** ...or when a channel with unsettled vouchers has been idle this long. */
  settleIdleSeconds: z.number().int().min(1).default(600),
  /** Seller closes channels idle this long (returns the rest of the lock to the buyer). */
  closeIdleSeconds: z.number().int().min(1).default(86_400),
  /** Seller refuses new requests while this much it served is not yet covered by vouchers. */
  maxUnvoucheredUsd: usd.default('0.10'),
  /**
   * How long a starting buyer or seller retries an unreachable chain before the seller refuses
   * to start and the buyer runs with free offers only (0: one try).
   */
  chainWaitSeconds: z.number().int().min(0).max(3600).default(30),
});

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
  payments: paymentsSchema.prefault({}),
});

export type ChainConfig = z.infer<typeof chainSchema>;
export type PaymentsConfig = z.infer<typeof paymentsSchema>;
