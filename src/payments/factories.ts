/** Factories the buyer, the seller node and the CLI call to get payment services. */
import type { LocalAccount } from 'viem/accounts';
import { type ConnectedChain, connectChain, type PaymentsContract } from '../chain/index.js';
import type { ChainConfig, PaymentsConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { parseUsd } from '../money/index.js';
import { BuyerPaymentService } from './buyer/BuyerPaymentService.js';
import type { BuyerPaymentsOptions, IdentitySource } from './buyer/types.js';
import type { Clock } from './clock.js';
import { SellerPaymentService, type SellerPaymentsOptions } from './seller/SellerPaymentService.js';

export interface CreateBuyerPaymentsOptions {
  dataDir: string;
  identities: IdentitySource;
  /** The connected payments contract (`connectChain(config.chain, dataDir).contract`). */
  chain: PaymentsContract;
  logger: Logger;
  clock?: Clock;
  /** `config.chain.payments`; defaults apply for anything missing. */
  config?: Partial<PaymentsConfig>;
  onClaimRefused?: BuyerPaymentsOptions['onClaimRefused'];
  /** Override the sweep period (0 = no timer); default from config. */
  sweepIntervalMs?: number;
  /** Channel re-read period (0 = no timer). Default 60 s. */
  reconcileIntervalMs?: number;
}

/** Creates the buyer's payments service; call `start()` before use and `stop()` at shutdown. */
export function createBuyerPayments(options: CreateBuyerPaymentsOptions): BuyerPaymentService {
  const config = options.config ?? {};
  return new BuyerPaymentService({
    dataDir: options.dataDir,
    identities: options.identities,
    contract: options.chain,
    logger: options.logger,
    clock: options.clock,
    channelLockMicro: parseUsd(config.channelLockUsd ?? '1.00'),
    tolerance: {
      percent: config.claimTolerancePercent ?? 10,
      slackTokens: config.claimSlackTokens ?? 16,
    },
    sweepIntervalMs: options.sweepIntervalMs ?? (config.sweepIntervalSeconds ?? 15) * 1000,
    relayerIdentity: config.relayerIdentity,
    onClaimRefused: options.onClaimRefused,
    reconcileIntervalMs: options.reconcileIntervalMs,
  });
}

export interface CreateSellerPaymentsOptions {
  dataDir: string;
  /** The seller's identity account (its address is its peer id). */
  account: LocalAccount;
  chain: PaymentsContract;
  logger: Logger;
  clock?: Clock;
  config?: Partial<PaymentsConfig>;
  /** Background tick period (0 = no timer; call `tick()`). Default 5 s. */
  tickIntervalMs?: SellerPaymentsOptions['tickIntervalMs'];
}

/** Creates the seller's payments hook; call `start()` (reconciles with chain) and `stop()`. */
export function createSellerPayments(options: CreateSellerPaymentsOptions): SellerPaymentService {
  const config = options.config ?? {};
  return new SellerPaymentService({
    dataDir: options.dataDir,
    account: options.account,
    contract: options.chain,
    logger: options.logger,
    clock: options.clock,
    settleThresholdMicro: parseUsd(config.settleThresholdUsd ?? '0.50'),
    settleIdleMs: (config.settleIdleSeconds ?? 600) * 1000,
    closeIdleMs: (config.closeIdleSeconds ?? 86_400) * 1000,
    maxUnvoucheredMicro: parseUsd(config.maxUnvoucheredUsd ?? '0.10'),
    tickIntervalMs: options.tickIntervalMs,
  });
}

/** Buyer payments for a one-shot command: chain from config, no sweep timer, no reconciliation. */
export function openBuyerPayments(options: {
  dataDir: string;
  chainConfig: ChainConfig;
  identities: IdentitySource;
  logger: Logger;
}): { payments: BuyerPaymentService; chain: ConnectedChain } {
  const chain = connectChain(options.chainConfig, options.dataDir);
  const payments = createBuyerPayments({
    dataDir: options.dataDir,
    identities: options.identities,
    chain: chain.contract,
    logger: options.logger,
    config: options.chainConfig.payments,
    sweepIntervalMs: 0,
    reconcileIntervalMs: 0,
  });
  return { payments, chain };
}
