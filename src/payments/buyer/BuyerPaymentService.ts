/**
 * The buyer's payments service: around each paid seller request,
 * `prepare` opens or reuses the identity's channel with that seller (signing a reserve to open it
 * or raise its lock when needed) and returns the payment object; `complete` checks the seller's
 * usage claim against the buyer's own count and signs the next cumulative voucher; `release`
 * frees a request that delivered nothing. No chain transaction happens on the request path: the
 * seller submits reserves; the buyer only reads its credits when a lock must grow.
 */

import { type Address, type Hex, toHex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { SvcError } from '../../errors/index.js';
import { isFreePrice, type MicroUsd } from '../../money/index.js';
import { maxBig, minBig } from '../amounts.js';
import { type Clock, KeyedQueue, systemClock } from '../clock.js';
import { channelIdOf, type PaymentsDomain, signReserve } from '../signatures.js';
import type { PaymentObject } from '../wire.js';
import { BuyerChannels } from './BuyerChannels.js';
import { billChannel, billLate } from './billChannel.js';
import { type ClaimTolerance, checkClaim } from './checkClaim.js';
import { claimToleranceFor } from './claimTolerance.js';
import { DepositSweeper } from './DepositSweeper.js';
import { IdentityKeys } from './identityKeys.js';
import { insufficientDeposits } from './insufficientDeposits.js';
import { paymentObjectOf } from './paymentObject.js';
import { type SigningContext, signIncrement } from './signIncrement.js';
import { type BuyerChannelRow, BuyerStore } from './store.js';
import type {
  BuyerPaymentsOptions,
  CompleteArgs,
  CompleteResult,
  LatePayArgs,
  PrepareArgs,
  SignedIncrement,
} from './types.js';

interface InFlight {
  channelId: Hex;
  identity: string;
  seller: Address;
  maxCostMicro: MicroUsd;
  /** The lock authorised when the payment object was built (the seller opened up to it). */
  lockMicro: MicroUsd;
}

/** Queue lane of an identity's channel with a seller: every change to that channel runs in it. */
export function pairKey(identity: string, seller: Address): string {
  return `${identity}|${seller.toLowerCase()}`;
}

/** Deadline of reserve authorisations: a day, so a slow seller can still open the channel. */
const RESERVE_TTL_SECONDS = 86_400n;

/** Buyer side of payments. */
export class BuyerPaymentService {
  readonly channels: BuyerChannels;
  readonly sweeper: DepositSweeper;
  private readonly options: BuyerPaymentsOptions;
  private readonly store: BuyerStore;
  private readonly domain: PaymentsDomain;
  private readonly clock: Clock;
  private readonly queue = new KeyedQueue();
  private readonly inFlight = new Map<string, InFlight>();
  /** Per channel, the seller's committed count from its last `channel_lock_exhausted` (decision 209). */
  private readonly sellerCommitted = new Map<Hex, MicroUsd>();
  private readonly channelLockMicro: MicroUsd;
  private readonly tolerance: ClaimTolerance;
  private readonly keys: IdentityKeys;
  private reconcileTimer: NodeJS.Timeout | undefined;
  private reconciling: Promise<void> | undefined;

  constructor(options: BuyerPaymentsOptions) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.store = new BuyerStore(options.dataDir);
    this.domain = {
      chainId: options.contract.chainId,
      paymentsAddress: options.contract.paymentsAddress,
    };
    this.channelLockMicro = options.channelLockMicro ?? 1_000_000n;
    this.tolerance = options.tolerance ?? { percent: 10, slackTokens: 16 };
    this.keys = new IdentityKeys(options.identities);
    this.channels = new BuyerChannels({
      store: this.store,
      contract: options.contract,
      identities: options.identities,
      logger: options.logger,
      clock: this.clock,
      queue: this.queue,
    });
    this.sweeper = new DepositSweeper({
      identities: options.identities,
      contract: options.contract,
      logger: options.logger,
      intervalMs: options.sweepIntervalMs ?? 15_000,
      relayerIdentity: options.relayerIdentity,
    });
  }

  /** Reconciles stored channels with the chain and starts the deposit sweeper. */
  async start(): Promise<void> {
    await this.channels.reconcile().catch((error: unknown) => {
      this.options.logger.warn(
        { err: String(error) },
        'channel reconciliation failed; will retry on use',
      );
    });
    this.sweeper.start();
    const every = this.options.reconcileIntervalMs ?? 60_000;
    if (every > 0) {
      this.reconcileTimer = setInterval(() => {
        this.reconciling ??= this.channels
          .reconcile()
          .catch((error: unknown) => {
            this.options.logger.warn({ err: String(error) }, 'channel reconciliation failed');
          })
          .finally(() => {
            this.reconciling = undefined;
          });
      }, every);
      this.reconcileTimer.unref();
    }
  }

  /** Usage claims this buyer refused per seller address since `sinceMs` (survives restarts). */
  refusedClaimsSince(sinceMs: number): Map<Address, number> {
    return this.store.refusedClaimsSince(sinceMs);
  }

  async stop(): Promise<void> {
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    this.reconcileTimer = undefined;
    await this.reconciling;
    await this.sweeper.stop();
    await this.queue.idle();
    this.keys.close();
    this.store.close();
  }

  /**
   * Payment object for a paid request, or undefined for a free offer. Throws SvcError
   * `insufficient_deposits` (402, details.neededUsd) when credits cannot cover `maxCostMicro`.
   */
  async prepare(args: PrepareArgs): Promise<PaymentObject | undefined> {
    if (isFreePrice(args.price)) return undefined;
    if (
      args.sellerPayments &&
      (args.sellerPayments.chainId !== this.domain.chainId ||
        args.sellerPayments.paymentsContract.toLowerCase() !==
          this.domain.paymentsAddress.toLowerCase())
    ) {
      throw new SvcError('payment_failed', {
        message: `This seller is paid on chain ${args.sellerPayments.chainId} at ${args.sellerPayments.paymentsContract}, not on the buyer's chain.`,
      });
    }
    const requestId = args.requestId ?? crypto.randomUUID();
    if (this.inFlight.has(requestId)) {
      throw new SvcError('invalid_request', {
        message: `Request id ${requestId} is already being paid.`,
      });
    }
    const account = this.keys.forNewRequest(args.identity);
    const seller = args.sellerAddress.toLowerCase() as Address;
    return this.queue.run(pairKey(args.identity, seller), async () => {
      let channel = this.store.findOpen(args.identity, seller);
      const reserved = channel ? this.reservedOn(channel.channelId) : 0n;
      const own = (channel?.signedMicro ?? 0n) + reserved;
      const sellers = channel ? (this.sellerCommitted.get(channel.channelId) ?? 0n) : 0n;
      const committed = maxBig(own, sellers) + args.maxCostMicro;
      if (!channel || committed > channel.authorisedLockMicro) {
        channel = await this.growLock(account, args.identity, seller, channel, committed);
        this.sellerCommitted.delete(channel.channelId);
      }
      this.inFlight.set(requestId, {
        channelId: channel.channelId,
        identity: args.identity,
        seller,
        maxCostMicro: args.maxCostMicro,
        lockMicro: channel.authorisedLockMicro,
      });
      return paymentObjectOf(this.domain, channel, requestId, args.maxCostMicro);
    });
  }

  /**
   * Checks the seller's claim and signs the next cumulative voucher for what the buyer accepts
   * (never above the request's cap or the lock; strictly increasing per channel).
   */
  async complete(args: CompleteArgs): Promise<CompleteResult> {
    const entry = this.inFlight.get(args.requestId);
    if (!entry) {
      throw new SvcError('invalid_request', {
        message: `No payment is pending for request ${args.requestId}.`,
      });
    }
    const claim = checkClaim({
      claimed: args.claimed,
      estimatedUsage: args.estimatedUsage,
      price: args.price,
      maxCostMicro: entry.maxCostMicro,
      tolerance: claimToleranceFor(this.tolerance, args),
      ...(args.receiptRefused ? { receiptRefused: true } : {}),
    });
    const account = this.keys.admitted(entry.identity);
    const result = await this.queue.run(pairKey(entry.identity, entry.seller), async () => {
      this.inFlight.delete(args.requestId);
      const channel = this.store.get(entry.channelId)!;
      const billed = billChannel(channel, claim, entry.lockMicro, this.clock.now());
      args.onCommit?.(billed.amountMicro);
      const signed = await signIncrement(this.signing(account), billed, args.requestId, {
        claimedMicro: claim.claimedMicro,
        estimatedMicro: claim.estimatedMicro,
        refused: !claim.accepted,
      });
      return { claim, ...signed };
    });
    // A refused receipt is logged, counted and penalised by the buyer's receipt check.
    if (!claim.accepted && claim.reason !== 'receipt_refused') {
      this.options.logger.warn(
        { peerId: args.peerId, requestId: args.requestId, reason: claim.reason },
        'seller usage claim refused; paid the buyer-side count',
      );
      this.options.onClaimRefused?.({
        peerId: args.peerId,
        requestId: args.requestId,
        channelId: entry.channelId,
        reason: claim.reason ?? 'refused',
        claimedMicro: claim.claimedMicro,
        estimatedMicro: claim.estimatedMicro,
      });
    }
    return result;
  }

  /**
   * Pays a stream a crashed run of this buyer delivered and never paid
   * (docs/decisions/154-late-voucher-after-a-crash.md): the next cumulative voucher on the
   * identity's open channel with the seller for `amountMicro` (within the lock), `onCommit` called
   * before it is signed, serialised with every other use of that channel. Undefined when nothing
   * is signed (no open channel, or no room left in its lock).
   */
  async payLate(args: LatePayArgs): Promise<SignedIncrement | undefined> {
    const account = this.keys.admitted(args.identity);
    const seller = args.sellerAddress.toLowerCase() as Address;
    return this.queue.run(pairKey(args.identity, seller), async () => {
      const channel = this.store.findOpen(args.identity, seller);
      if (!channel) return undefined;
      const billed = billLate(channel, args.amountMicro, args.usage, this.clock.now());
      if (billed.amountMicro === 0n) return undefined;
      args.onCommit?.(billed.amountMicro);
      return signIncrement(this.signing(account), billed, args.requestId, {
        claimedMicro: 0n,
        estimatedMicro: args.amountMicro,
        refused: false,
      });
    });
  }

  /**
   * Frees a request that delivered nothing (failed before the head, refused by the seller).
   * When the seller said the channel is closed, the channel is retired so the next request opens
   * a new one.
   */
  release(
    requestId: string,
    sellerError?: { code?: string; details?: Record<string, unknown> },
  ): void {
    const entry = this.inFlight.get(requestId);
    if (!entry) return;
    this.inFlight.delete(requestId);
    if (sellerError?.code === 'channel_lock_exhausted')
      this.noteSellerCommitted(entry, sellerError);
    if (sellerError?.details?.reason === 'channel_closed') {
      void this.queue.run(pairKey(entry.identity, entry.seller), async () => {
        const channel = this.store.get(entry.channelId);
        if (channel?.status === 'open') {
          this.store.put({ ...channel, status: 'closed', updatedAtMs: this.clock.now() });
        }
      });
    }
  }

  /**
   * Keeps the committed amount a seller refused a request with, for the next request's lock. A
   * seller may say any number: it is believed up to one default lock beyond what the buyer
   * itself counts on the channel, so a lying seller can make the buyer lock (never pay) at most
   * that much more, and the credits come back when the channel closes.
   */
  private noteSellerCommitted(
    entry: InFlight,
    sellerError: { details?: Record<string, unknown> },
  ): void {
    const said = sellerError.details?.committedMicro;
    if (typeof said !== 'string' || !/^\d{1,20}$/.test(said)) return;
    const channel = this.store.get(entry.channelId);
    if (channel?.status !== 'open') return;
    const own = channel.signedMicro + this.reservedOn(entry.channelId);
    const believed = minBig(BigInt(said), own + this.channelLockMicro);
    if (believed <= own) return;
    this.sellerCommitted.set(
      entry.channelId,
      maxBig(believed, this.sellerCommitted.get(entry.channelId) ?? 0n),
    );
  }

  private signing(account: LocalAccount): SigningContext {
    return { account, domain: this.domain, store: this.store, nowMs: this.clock.now() };
  }

  private reservedOn(channelId: Hex): MicroUsd {
    let total = 0n;
    for (const entry of this.inFlight.values())
      if (entry.channelId === channelId) total += entry.maxCostMicro;
    return total;
  }

  /** Opens a channel or raises its lock to cover `committed`, within the identity's credits. */
  private async growLock(
    account: LocalAccount,
    identity: string,
    seller: Address,
    channel: BuyerChannelRow | undefined,
    committed: MicroUsd,
  ): Promise<BuyerChannelRow> {
    const current = channel?.authorisedLockMicro ?? 0n;
    const needed = committed - current;
    const available = await this.availableCredits(account.address, identity);
    if (available < needed) {
      const wallet = await this.options.contract.usdcBalanceOf(account.address).catch(() => 0n);
      throw insufficientDeposits({ needed, available, wallet, identity, address: account.address });
    }
    const wanted = maxBig(needed, this.channelLockMicro);
    const lock = current + minBig(wanted, available);
    const now = this.clock.now();
    const salt = channel?.salt ?? toHex(crypto.getRandomValues(new Uint8Array(32)));
    const channelId = channel?.channelId ?? channelIdOf(account.address, seller, salt);
    const deadline = BigInt(Math.floor(now / 1000)) + RESERVE_TTL_SECONDS;
    const reserveSignature = await signReserve(account, this.domain, {
      channelId,
      buyer: account.address,
      seller,
      maxAmount: lock,
      deadline,
    });
    const row: BuyerChannelRow = channel
      ? {
          ...channel,
          authorisedLockMicro: lock,
          reserveDeadline: deadline,
          reserveSignature,
          updatedAtMs: now,
        }
      : {
          channelId,
          identity,
          buyer: account.address,
          seller,
          salt,
          authorisedLockMicro: lock,
          confirmedLockMicro: 0n,
          reserveDeadline: deadline,
          reserveSignature,
          signedMicro: 0n,
          voucherSignature: null,
          settledMicro: 0n,
          status: 'open',
          requests: 0,
          inputTokens: 0,
          cachedInputTokens: 0,
          outputTokens: 0,
          refusedClaims: 0,
          reclaimableAt: 0,
          createdAtMs: now,
          updatedAtMs: now,
        };
    this.store.put(row);
    return row;
  }

  /** On-chain free credits minus lock increases authorised but not yet on chain. */
  private async availableCredits(address: Address, identity: string): Promise<MicroUsd> {
    let credits: MicroUsd;
    try {
      credits = await this.options.contract.creditsOf(address);
    } catch (error) {
      throw new SvcError('chain_unavailable', {
        message: `The chain RPC is unreachable (${this.options.contract.clients.rpcUrls[0]}): cannot read credits.`,
        cause: error,
      });
    }
    let pending = 0n;
    for (const row of this.store.list({ identity, status: ['open'] })) {
      pending += row.authorisedLockMicro - row.confirmedLockMicro;
    }
    return credits > pending ? credits - pending : 0n;
  }
}
