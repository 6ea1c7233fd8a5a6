/**
 * The seller's payments hook: `admit` a paid request only within
 * its channel's remaining lock (opening or topping up the channel on chain with the buyer's
 * reserve authorisation when needed), `record` what was delivered, take vouchers (in the next
 * request's payment object or on `/svc/voucher/1`), and settle/close on chain in the background.
 * State is persisted in SQLite; `start()` reconciles every channel with the chain.
 */

import type { Address, Hex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import type { PaymentsContract } from '../../chain/index.js';
import { errorMessage, SvcError } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import { isFreePrice, type TokenPriceMicro, type TokenUsage } from '../../money/index.js';
import { maxBig } from '../amounts.js';
import { type Clock, KeyedQueue, systemClock } from '../clock.js';
import {
  channelIdOf,
  isReserveSignedByBuyer,
  isVoucherSignedBy,
  type PaymentsDomain,
} from '../signatures.js';
import {
  decodeVoucherMessage,
  encodeVoucherReply,
  type PaymentObject,
  parsePaymentObject,
  type VoucherMessage,
} from '../wire.js';
import { SellerChain } from './sellerChain.js';
import { type SellerChannelRow, SellerStore } from './store.js';

export interface SellerPaymentsOptions {
  dataDir: string;
  /** The seller's key: its address is where it is paid and who opens/settles channels. */
  account: LocalAccount;
  contract: PaymentsContract;
  logger: Logger;
  clock?: Clock;
  /** Settle once this much (micro-USD) is unsettled. Default 500_000. */
  settleThresholdMicro?: bigint;
  /** Settle a channel with unsettled vouchers idle this long. Default 10 min. */
  settleIdleMs?: number;
  /** Close channels idle this long. Default 24 h. */
  closeIdleMs?: number;
  /** Refuse new requests while more than this (micro-USD) served is not covered by vouchers. */
  maxUnvoucheredMicro?: bigint;
  /** Background tick (settle, close, events). Default 5 s; 0 disables the timer. */
  tickIntervalMs?: number;
}

/** The offer a request is served under (the seller's own advertised price). */
export interface ServedOffer {
  price: TokenPriceMicro;
}

/** The result of `admit`: pass `requestId` to `record` when the request ends. */
export interface SellerAdmission {
  free: boolean;
  requestId: string;
  channelId?: Hex;
  /** The most this request may be billed. */
  maxCostMicro: bigint;
}

interface InFlight {
  channelId: Hex;
  maxCostMicro: bigint;
}

function refuse(reason: string, message: string, details: Record<string, unknown> = {}): SvcError {
  return new SvcError('payment_invalid', { message, details: { reason, ...details } });
}

/** Seller side of payments. */
export class SellerPaymentService {
  readonly address: Address;
  private readonly store: SellerStore;
  private readonly chain: SellerChain;
  private readonly domain: PaymentsDomain;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly maxUnvoucheredMicro: bigint;
  private readonly tickIntervalMs: number;
  private readonly queue = new KeyedQueue();
  private readonly inFlight = new Map<string, InFlight>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(options: SellerPaymentsOptions) {
    this.address = options.account.address;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger;
    this.store = new SellerStore(options.dataDir);
    this.domain = {
      chainId: options.contract.chainId,
      paymentsAddress: options.contract.paymentsAddress,
    };
    this.maxUnvoucheredMicro = options.maxUnvoucheredMicro ?? 100_000n;
    this.tickIntervalMs = options.tickIntervalMs ?? 5000;
    this.chain = new SellerChain({
      account: options.account,
      contract: options.contract,
      store: this.store,
      queue: this.queue,
      clock: this.clock,
      logger: options.logger,
      settleThresholdMicro: options.settleThresholdMicro ?? 500_000n,
      settleIdleMs: options.settleIdleMs ?? 600_000,
      closeIdleMs: options.closeIdleMs ?? 86_400_000,
      hasInFlight: (channelId) =>
        [...this.inFlight.values()].some((entry) => entry.channelId === channelId),
    });
  }

  /** Where this seller is paid (for `capabilities.payments` in its peer metadata). */
  get paymentsInfo(): { chainId: number; paymentsContract: Address } {
    return { chainId: this.domain.chainId, paymentsContract: this.domain.paymentsAddress };
  }

  /** Reconciles every stored channel with the chain and starts the background tick. */
  async start(): Promise<void> {
    await this.chain.reconcile();
    if (this.tickIntervalMs > 0) {
      this.timer = setInterval(() => void this.tick(), this.tickIntervalMs);
      this.timer.unref();
    }
  }

  /** Stops the tick and waits for chain work under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    await this.queue.idle();
    this.store.close();
  }

  /** One round of background work: close requests from events, due settlements and closes. */
  tick(): Promise<void> {
    this.ticking ??= this.chain.tick().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  /**
   * Admits a request: free offers always; paid ones only with a valid payment whose channel has
   * room for `maxCostMicro`. Throws SvcError 402 (`payment_invalid`, `channel_lock_exhausted`).
   */
  async admit(
    payment: unknown,
    offer: ServedOffer,
    maxCostMicro: bigint,
  ): Promise<SellerAdmission> {
    if (isFreePrice(offer.price)) {
      const requestId =
        typeof payment === 'object' && payment !== null && 'requestId' in payment
          ? String((payment as { requestId: unknown }).requestId)
          : crypto.randomUUID();
      return { free: true, requestId, maxCostMicro: 0n };
    }
    if (payment === undefined || payment === null) {
      throw refuse('missing', 'This seller is paid: send a payment channel with the request.');
    }
    const parsed = parsePaymentObject(payment);
    this.checkDomain(parsed);
    const cost =
      maxCostMicro > BigInt(parsed.maxCostMicro) ? maxCostMicro : BigInt(parsed.maxCostMicro);
    return this.queue.run(parsed.channelId, async () => {
      const opened = await this.ensureChannel(parsed);
      if (parsed.voucher) {
        await this.applyVoucher(
          opened,
          BigInt(parsed.voucher.cumulativeAmount),
          parsed.voucher.signature,
        );
      }
      // Re-read: `record` may have run while we awaited the chain or signature checks.
      const channel = this.store.get(parsed.channelId)!;
      const unvouchered = channel.billedMicro - channel.voucherMicro;
      if (unvouchered > this.maxUnvoucheredMicro) {
        throw refuse(
          'unpaid',
          'Earlier requests on this channel are not paid for: send their vouchers.',
          {
            unpaidMicro: unvouchered.toString(),
          },
        );
      }
      const committed = this.committed(channel);
      if (committed + cost > channel.lockMicro) {
        throw new SvcError('channel_lock_exhausted', {
          details: {
            channelId: channel.channelId,
            lockMicro: channel.lockMicro.toString(),
            committedMicro: committed.toString(),
            neededMicro: cost.toString(),
          },
        });
      }
      this.inFlight.set(parsed.requestId, { channelId: channel.channelId, maxCostMicro: cost });
      this.store.patch(channel.channelId, (row) => ({ ...row, lastActivityMs: this.clock.now() }));
      return {
        free: false,
        requestId: parsed.requestId,
        channelId: channel.channelId,
        maxCostMicro: cost,
      };
    });
  }

  /**
   * Records what a request delivered and what it is billed (capped at what was admitted). A
   * cancelled request is recorded with the usage actually delivered.
   */
  /** True the first time something billable once (a video job's delivery) is claimed. */
  claimOnce(key: string): boolean {
    return this.store.claimOnce(key, this.clock.now());
  }

  record(requestId: string, usage: TokenUsage, costMicro: bigint): void {
    const entry = this.inFlight.get(requestId);
    if (!entry) return;
    this.inFlight.delete(requestId);
    const billed =
      costMicro > entry.maxCostMicro ? entry.maxCostMicro : costMicro < 0n ? 0n : costMicro;
    this.store.patch(entry.channelId, (channel) => ({
      ...channel,
      billedMicro: channel.billedMicro + billed,
      requests: channel.requests + 1,
      lastActivityMs: this.clock.now(),
    }));
    this.logger.debug(
      { requestId, usage, billedMicro: billed.toString() },
      'paid request recorded',
    );
  }

  /** Takes a voucher for a completed request. Throws SvcError `payment_invalid` when it is bad. */
  async receiveVoucher(message: VoucherMessage): Promise<void> {
    await this.queue.run(message.channelId, async () => {
      const channel = this.store.get(message.channelId);
      if (!channel) throw refuse('unknown_channel', 'No such channel at this seller.');
      await this.applyVoucher(channel, BigInt(message.cumulativeAmount), message.signature);
      this.store.patch(channel.channelId, (row) => ({ ...row, lastActivityMs: this.clock.now() }));
    });
    this.chain.settleIfDue(message.channelId);
  }

  /** `/svc/voucher/1` handler: request bytes in, reply bytes out (never throws). */
  async handleVoucherBytes(bytes: Uint8Array): Promise<Uint8Array> {
    try {
      await this.receiveVoucher(decodeVoucherMessage(bytes));
      return encodeVoucherReply({ v: 1, ok: true });
    } catch (error) {
      const message = errorMessage(error);
      return encodeVoucherReply({ v: 1, ok: false, error: message });
    }
  }

  /** Every channel this seller knows, newest activity last. */
  channels(): SellerChannelRow[] {
    return this.store.list();
  }

  /** Settles everything unsettled now (e.g. before shutdown). */
  async settleAll(): Promise<void> {
    await this.chain.settleAll();
  }

  private committed(channel: SellerChannelRow): bigint {
    let total = maxBig(channel.billedMicro, channel.voucherMicro);
    for (const entry of this.inFlight.values()) {
      if (entry.channelId === channel.channelId) total += entry.maxCostMicro;
    }
    return total;
  }

  private checkDomain(payment: PaymentObject): void {
    if (
      payment.chainId !== this.domain.chainId ||
      payment.paymentsContract.toLowerCase() !== this.domain.paymentsAddress.toLowerCase()
    ) {
      throw refuse('wrong_chain', 'This seller is paid on another chain or payments contract.', {
        chainId: this.domain.chainId,
        paymentsContract: this.domain.paymentsAddress,
      });
    }
    if (
      channelIdOf(payment.buyer, this.address, payment.salt).toLowerCase() !==
      payment.channelId.toLowerCase()
    ) {
      throw refuse('wrong_channel', 'The channel id does not belong to this buyer and seller.');
    }
  }

  /** The stored channel, opening it or raising its lock on chain with the buyer's reserve. */
  private async ensureChannel(payment: PaymentObject): Promise<SellerChannelRow> {
    let channel = this.store.get(payment.channelId);
    if (channel && channel.buyer.toLowerCase() !== payment.buyer.toLowerCase()) {
      throw refuse('wrong_channel', 'The channel belongs to another buyer.');
    }
    const reserve = payment.reserve;
    const wantsLock = reserve ? BigInt(reserve.maxAmount) : 0n;
    if (channel && (!reserve || wantsLock <= channel.lockMicro)) {
      if (channel.status !== 'open' || channel.closeRequested) {
        throw refuse('channel_closed', 'This channel is closed or closing: open a new one.');
      }
      return channel;
    }
    if (!reserve) {
      // Opened before but unknown here (e.g. a lost database): adopt it from the chain.
      const adopted = await this.chain.adopt(payment.channelId, payment.buyer);
      if (adopted?.status === 'open' && !adopted.closeRequested) return adopted;
      throw refuse('unknown_channel', 'Unknown channel: send a reserve authorisation to open it.');
    }
    const message = {
      channelId: payment.channelId,
      buyer: payment.buyer,
      seller: this.address,
      maxAmount: wantsLock,
      deadline: BigInt(reserve.deadline),
    };
    if (!(await isReserveSignedByBuyer(this.domain, message, reserve.signature))) {
      throw refuse(
        'bad_reserve',
        'The reserve authorisation is not signed by the buyer for this channel.',
      );
    }
    channel = await this.chain.openOrTopUp(channel, payment, message, reserve.signature);
    return channel;
  }

  /** Verifies a voucher and keeps it when it raises the cumulative amount. */
  private async applyVoucher(
    channel: SellerChannelRow,
    cumulative: bigint,
    signature: Hex,
  ): Promise<void> {
    if (cumulative <= channel.voucherMicro) return;
    if (cumulative > channel.lockMicro) {
      throw refuse('bad_voucher', 'The voucher is above the channel lock.');
    }
    const valid = await isVoucherSignedBy(
      this.domain,
      { channelId: channel.channelId, cumulativeAmount: cumulative },
      signature,
      channel.buyer,
    );
    if (!valid)
      throw refuse('bad_voucher', 'The voucher is not signed by the buyer for this channel.');
    this.store.patch(channel.channelId, (row) =>
      cumulative > row.voucherMicro
        ? { ...row, voucherMicro: cumulative, voucherSignature: signature }
        : row,
    );
  }
}
