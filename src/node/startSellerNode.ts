/**
 * `svc seller start` (decision 070): `startPaidSeller` starts a seller whose priced offers are paid
 * through channels on the configured chain — it advertises `capabilities.payments`, admits and
 * records every request through `SellerPaymentsHook`, serves `/svc/voucher/1` and runs the
 * settle/close ticks. A seller with priced offers and no chain refuses to start unless explicitly
 * `free` (decision 071).
 */

import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { PaymentsContract } from '../chain/index.js';
import type { PaymentsConfig, SellerConfig } from '../config/index.js';
import { errorMessage, isSvcError, SvcError } from '../errors/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import { isFreePrice, toPriceMicro } from '../money/index.js';
import {
  assertPaymentsContract,
  type Clock,
  createSellerPayments,
  type SellerPaymentService,
  SellerPaymentsHook,
  serveVouchers,
} from '../payments/index.js';
import { type SellerHandle, type StartSellerOptions, startSeller } from '../seller/index.js';
import type { RunningService } from './service.js';
import { DEFAULT_CHAIN_WAIT_SECONDS, waitForChain } from './waitForChain.js';

/** True when any service of the seller config has a non-zero price. */
export function hasPricedOffers(seller: SellerConfig): boolean {
  return seller.providers.some((provider) =>
    Object.values(provider.services).some(
      (service) => !isFreePrice(toPriceMicro(service.pricing ?? provider.defaultPricing)),
    ),
  );
}

export interface StartPaidSellerOptions extends Omit<StartSellerOptions, 'payments'> {
  dataDir: string;
  /** The chain's payments contract; undefined when no chain is configured. */
  chain: PaymentsContract | undefined;
  /** Why there is no chain (shown when a priced seller must refuse to start). */
  chainProblem?: string;
  paymentsConfig?: Partial<PaymentsConfig>;
  /** Serve priced offers without payment (development only; advertises no payments). */
  free?: boolean;
  clock?: Clock;
  /** Settle/close tick period (0: no timer, call `payments.tick()`). Default 5 s. */
  tickIntervalMs?: number;
}

export interface PaidSellerHandle extends SellerHandle, RunningService {
  /** The payments service, when the seller is paid. */
  payments: SellerPaymentService | undefined;
}

/** Starts a seller; paid through channels when it has priced offers. */
export async function startPaidSeller(options: StartPaidSellerOptions): Promise<PaidSellerHandle> {
  const logger: Logger = options.logger ?? silentLogger();
  const priced = hasPricedOffers(options.seller);
  if (!priced || options.free) {
    if (priced) logger.warn('serving priced offers without payment (--free)');
    const handle = await startSeller(options);
    return { ...handle, payments: undefined };
  }
  if (!options.chain) {
    throw new SvcError('invalid_config', {
      message: `This seller has priced offers but no payment chain is configured${options.chainProblem ? ` (${options.chainProblem})` : ''}. Start a local chain with \`svc chain start\`, configure chain.network/chain.paymentsAddress, or pass --free to serve the priced offers unpaid.`,
    });
  }
  const payments = createSellerPayments({
    dataDir: options.dataDir,
    account: privateKeyToAccount(options.identity.privateKey as Hex),
    chain: options.chain,
    logger,
    config: options.paymentsConfig,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.tickIntervalMs !== undefined ? { tickIntervalMs: options.tickIntervalMs } : {}),
  });
  const chain = options.chain;
  try {
    // A contract that is not ours refuses the start with what differs (payments_contract_mismatch).
    await waitForChain(
      async () => {
        await assertPaymentsContract(chain);
        await payments.start();
      },
      {
        waitMs: (options.paymentsConfig?.chainWaitSeconds ?? DEFAULT_CHAIN_WAIT_SECONDS) * 1000,
        logger,
        rpcUrl: chain.clients.rpcUrls[0] ?? '',
        who: 'seller',
      },
    );
  } catch (error) {
    await payments.stop().catch(() => undefined);
    if (isSvcError(error)) throw error;
    throw new SvcError('chain_unavailable', {
      message: `The payment chain is unreachable (${options.chain.clients.rpcUrls[0]}): ${errorMessage(error)}`,
      cause: error,
    });
  }
  let handle: SellerHandle;
  try {
    handle = await startSeller({ ...options, payments: new SellerPaymentsHook(payments) });
  } catch (error) {
    await payments.stop();
    throw error;
  }
  const unserve = await serveVouchers(handle.node, (bytes) => payments.handleVoucherBytes(bytes));
  return {
    ...handle,
    payments,
    async stop() {
      await unserve().catch(() => undefined);
      await handle.stop();
      await payments.stop();
    },
  };
}
