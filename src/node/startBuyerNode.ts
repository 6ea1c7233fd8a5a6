/**
 * `svc buyer start` with payments (decision 072): when a chain is configured and reachable, the
 * buyer node pays sellers through channels (`VoucherPayments`), delivers vouchers over
 * `/svc/voucher/1` on its own libp2p node, sweeps wallet USDC into deposits, lists its open
 * channels on `GET /_svc/channels`, and ranks sellers by on-chain trust (`ChainReputation`). Without a
 * chain it runs as before: free offers only.
 */

import type { RunBuyerNodeOptions, RunningBuyerNode } from '../buyer/index.js';
import { runBuyerNode } from '../buyer/index.js';
import type { PaymentsContract } from '../chain/index.js';
import type { PaymentsConfig } from '../config/index.js';
import { errorFirstLine, isSvcError } from '../errors/index.js';
import { peerIdFromAddress } from '../identity/index.js';
import {
  assertPaymentsContract,
  type BuyerChannelRow,
  type BuyerPaymentService,
  ChainReputation,
  type Clock,
  createBuyerPayments,
  type IdentitySource,
  type MeteringEntry,
  PENALTY_MEMORY_MS,
  ReputationReader,
  readStoredChannels,
  sendVoucher,
  toMeteringEntry,
  VoucherPayments,
} from '../payments/index.js';
import type { RunningService } from './service.js';
import { type ChainWait, DEFAULT_CHAIN_WAIT_SECONDS, waitForChain } from './waitForChain.js';

export interface StartPaidBuyerOptions
  extends Omit<RunBuyerNodeOptions, 'payments' | 'reputation'> {
  /** The chain's payments contract; undefined when no chain is configured. */
  chain: PaymentsContract | undefined;
  identities: IdentitySource;
  paymentsConfig?: Partial<PaymentsConfig>;
  clock?: Clock;
  /** Deposit sweep period override (0 = no timer). */
  sweepIntervalMs?: number;
  /** On-chain reputation refresh period (0 = no timer). Default 60 s. */
  reputationRefreshMs?: number;
}

export interface PaidBuyerNode extends RunningBuyerNode, RunningService {
  /** Present when the buyer pays sellers (a chain is configured and reachable). */
  payments: BuyerPaymentService | undefined;
  reputation: ChainReputation | undefined;
  /** Why the buyer runs without payments, when it does. */
  paymentsProblem: string | undefined;
}

/** `GET /_svc/channels`: open and closing channels, as `svc buyer metering --json` shows them. */
function openChannels(rows: BuyerChannelRow[]): MeteringEntry[] {
  return rows.filter((row) => row.status !== 'closed').map(toMeteringEntry);
}

/** Starts the buyer node; paid when the chain answers, free offers only otherwise. */
export async function startPaidBuyerNode(options: StartPaidBuyerOptions): Promise<PaidBuyerNode> {
  const problem = await chainProblem(options.chain, {
    waitMs: (options.paymentsConfig?.chainWaitSeconds ?? DEFAULT_CHAIN_WAIT_SECONDS) * 1000,
    logger: options.logger,
    rpcUrl: options.chain?.clients.rpcUrls[0] ?? '',
    who: 'buyer',
  });
  if (problem !== undefined || !options.chain) {
    options.logger.warn({ problem }, 'buyer runs without payments: free offers only');
    return startFreeBuyer(options, problem);
  }
  return startPayingBuyer(options, options.chain);
}

/**
 * Why the buyer cannot pay (no chain, or it does not answer within the wait), or undefined when it can. A
 * contract that is not ours is no reason to run free: the buyer refuses to start
 * (payments_contract_mismatch), since its config points its deposits at the wrong place.
 */
async function chainProblem(
  chain: PaymentsContract | undefined,
  wait: ChainWait,
): Promise<string | undefined> {
  if (!chain) return 'no payment chain is configured';
  try {
    await waitForChain(() => assertPaymentsContract(chain), wait);
    return undefined;
  } catch (error) {
    if (isSvcError(error) && error.code === 'payments_contract_mismatch') throw error;
    return `the payment chain is unreachable (${chain.clients.rpcUrls[0]}): ${errorFirstLine(error)}`;
  }
}

/** Free offers only; channels of an earlier paid run stay listed (reclaim them with `svc buyer channels`). */
async function startFreeBuyer(
  options: StartPaidBuyerOptions,
  problem: string | undefined,
): Promise<PaidBuyerNode> {
  const running = await runBuyerNode({
    ...options,
    channels: () => {
      try {
        return openChannels(readStoredChannels(options.dataDir));
      } catch {
        return [];
      }
    },
  });
  return { ...running, payments: undefined, reputation: undefined, paymentsProblem: problem };
}

/** On-chain trust scores of the sellers the node knows, refreshed in the background. */
function chainReputation(
  options: StartPaidBuyerOptions,
  chain: PaymentsContract,
  node: () => RunningBuyerNode | undefined,
): ChainReputation {
  const refreshMs = options.reputationRefreshMs ?? 60_000;
  return new ChainReputation({
    reader: new ReputationReader({
      contract: chain,
      ...(options.clock ? { clock: options.clock } : {}),
      cacheTtlMs: refreshMs > 0 ? refreshMs : 1,
    }),
    peers: () =>
      node()
        ?.directory.list()
        .map((peer) => peer.metadata.peerId) ?? [],
    logger: options.logger,
    refreshMs,
  });
}

/** The channel payments service, started, with the claim refusals of the last weeks replayed. */
async function startChannelPayments(
  options: StartPaidBuyerOptions,
  chain: PaymentsContract,
  reputation: ChainReputation,
): Promise<BuyerPaymentService> {
  const payments = createBuyerPayments({
    dataDir: options.dataDir,
    identities: options.identities,
    chain,
    logger: options.logger,
    config: options.paymentsConfig,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.sweepIntervalMs !== undefined ? { sweepIntervalMs: options.sweepIntervalMs } : {}),
    onClaimRefused: (event) => reputation.penalise(event.peerId),
  });
  await payments.start();
  // Refusals survive a restart: a seller caught inflating usage stays ranked lower for a while.
  const now = options.clock?.now() ?? Date.now();
  for (const [address, count] of payments.refusedClaimsSince(now - PENALTY_MEMORY_MS)) {
    reputation.penalise(peerIdFromAddress(address), count);
  }
  return payments;
}

/** The buyer node paying through channels, ranked by on-chain trust. */
async function startPayingBuyer(
  options: StartPaidBuyerOptions,
  chain: PaymentsContract,
): Promise<PaidBuyerNode> {
  let node: RunningBuyerNode | undefined;
  // Vouchers signed while the node starts (streams paid late after a crash, before the buyer
  // serves: docs/decisions/154-late-voucher-after-a-crash.md) go out once it runs.
  let started: (running: RunningBuyerNode | undefined) => void = () => undefined;
  const running = new Promise<RunningBuyerNode | undefined>((resolve) => {
    started = resolve;
  });
  const reputation = chainReputation(options, chain, () => node);
  const payments = await startChannelPayments(options, chain, reputation);
  const adapter = new VoucherPayments({
    payments,
    logger: options.logger,
    deliver: async (peerId, voucher) => {
      const current = node ?? (await running);
      if (!current) throw new Error('buyer node not running');
      return sendVoucher(current.node, current.directory, peerId, voucher);
    },
  });
  try {
    node = await runBuyerNode({
      ...options,
      payments: adapter,
      reputation,
      channels: () => openChannels(payments.channels.list()),
    });
    started(node);
  } catch (error) {
    started(undefined);
    await adapter.idle();
    await payments.stop();
    throw error;
  }
  reputation.start();
  const paying = node;
  return {
    ...paying,
    payments,
    reputation,
    paymentsProblem: undefined,
    async stop() {
      // Vouchers waiting for a next request go out while the node still runs.
      await adapter.idle();
      await paying.stop();
      await adapter.idle();
      await reputation.stop();
      await payments.stop();
    },
  };
}
