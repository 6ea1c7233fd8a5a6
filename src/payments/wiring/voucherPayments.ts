/**
 * Pays each of the buyer's seller requests by voucher, behind the buyer's `BuyerPayments` port
 * (src/ports/buyerPayments.ts, decision 072): `prepare` opens or
 * reuses the identity's channel and returns the payment object; `complete` checks the seller's
 * claim against the buyer's own token count, signs the cumulative voucher and delivers it to the
 * seller on `/svc/voucher/1` (the next request's payment object carries it too); `payLate` does
 * the same for a stream delivered before a crash; `release` frees a request that delivered nothing.
 *
 * A voucher waits CARRY_WAIT_MS for the next request to the seller to carry it (decision 161):
 * back-to-back requests on a channel then pay in band, with no `/svc/voucher/1` stream (an extra
 * libp2p stream, Noise messages and a round trip per request). A request's voucher counts as
 * carried once that request completed (the seller took its payment, voucher first, to admit it).
 * Vouchers waiting for one channel are coalesced: they are cumulative, only the newest is sent.
 */

import type { PeerId } from '../../identity/index.js';
import type { Logger } from '../../log/index.js';
import type {
  BuyerPayments as BuyerPaymentsSeam,
  CompleteInput,
  CompleteOutcome,
  LatePaymentInput,
  PrepareInput,
} from '../../ports/index.js';
import type { BuyerPaymentService } from '../buyer/BuyerPaymentService.js';
import type { PaymentObject, VoucherMessage, VoucherReply } from '../wire.js';

/** How long a signed voucher waits for the next request to the seller to carry it. */
export const CARRY_WAIT_MS = 500;
/**
 * A voucher whose delivery failed (the seller crashed, restarts, is cut off) is sent again after
 * 1 s, 2 s, 4 s ... capped at a minute, this many times in all, unless a request carried it by
 * then: a seller that served a request and died before its voucher arrived, and that no request
 * is routed to afterwards, is still paid once it is back
 * (docs/decisions/185-vouchers-kept-until-delivered.md).
 */
const MAX_DELIVERY_TRIES = 9;
const MAX_RETRY_DELAY_MS = 60_000;

/** Prepared requests remembered for the voucher they carry (the oldest forgotten past this). */
const MAX_CARRIED = 10_000;

/** A voucher waiting to be sent on its own. */
interface Waiting {
  peerId: PeerId;
  requestId: string;
  voucher: VoucherMessage;
  timer: NodeJS.Timeout;
  /** Deliveries of this channel's vouchers that failed so far. */
  failures: number;
}

export interface VoucherPaymentsOptions {
  payments: BuyerPaymentService;
  /** Sends a voucher to the seller (e.g. `sendVoucher` on the buyer's libp2p node). */
  deliver?: (peerId: PeerId, voucher: VoucherMessage) => Promise<VoucherReply>;
  logger: Logger;
  /** The wait before a failed delivery's next try, by failures so far (default: 1 s doubling, at most 1 min). */
  retryDelayMs?: (failures: number) => number;
}

function retryDelayMs(failures: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, 1000 * 2 ** failures);
}

/** Adapts `BuyerPaymentService` (src/payments) to the buyer's `BuyerPayments` seam (src/buyer). */
export class VoucherPayments implements BuyerPaymentsSeam {
  private readonly options: VoucherPaymentsOptions;
  private readonly deliveries = new Set<Promise<unknown>>();
  /** The cumulative amount each prepared request's payment carries, with its channel. */
  private readonly carried = new Map<string, { channelId: string; cumulative: bigint }>();
  /** Per channel, the highest cumulative amount the seller took in band. */
  private readonly carriedToSeller = new Map<string, bigint>();
  private readonly waiting = new Map<string, Waiting>();

  constructor(options: VoucherPaymentsOptions) {
    this.options = options;
  }

  async prepare(input: PrepareInput): Promise<object | undefined> {
    // A failover attempt of the same request: the earlier attempt's reservation is void.
    this.options.payments.release(input.requestId);
    this.carried.delete(input.requestId);
    const payment = await this.options.payments.prepare(input);
    const voucher = (payment as PaymentObject | undefined)?.voucher;
    if (payment && voucher) {
      if (this.carried.size >= MAX_CARRIED) this.carried.delete(this.carried.keys().next().value!);
      this.carried.set(input.requestId, {
        channelId: (payment as PaymentObject).channelId,
        cumulative: BigInt(voucher.cumulativeAmount),
      });
    }
    return payment;
  }

  async complete(input: CompleteInput): Promise<CompleteOutcome> {
    // The seller answered, so it took the voucher this request carried, whatever `complete` says.
    this.noteCarried(input.requestId);
    const result = await this.options.payments.complete({
      requestId: input.requestId,
      peerId: input.peerId,
      claimed: input.claimed,
      estimatedUsage: input.estimatedUsage,
      price: input.price,
      ...(input.serviceId !== undefined ? { serviceId: input.serviceId } : {}),
      ...(input.units ? { units: true } : {}),
      ...(input.receiptRefused ? { receiptRefused: true } : {}),
      ...(input.onCommit ? { onCommit: input.onCommit } : {}),
    });
    if (result.voucher) this.sendUnlessCarried(input.peerId, input.requestId, result.voucher);
    return { amountMicro: result.amountMicro };
  }

  private noteCarried(requestId: string): void {
    const carried = this.carried.get(requestId);
    if (!carried) return;
    this.carried.delete(requestId);
    const before = this.carriedToSeller.get(carried.channelId) ?? -1n;
    if (carried.cumulative > before)
      this.carriedToSeller.set(carried.channelId, carried.cumulative);
  }

  /**
   * Sends `voucher` after `delayMs` (the carry wait, or a retry's back-off) unless a request
   * carried it (or a later one) by then.
   */
  private sendUnlessCarried(
    peerId: PeerId,
    requestId: string,
    voucher: VoucherMessage,
    delayMs = CARRY_WAIT_MS,
    failures = 0,
  ): void {
    const channelId = voucher.channelId;
    const waiting = this.waiting.get(channelId);
    if (waiting) {
      if (BigInt(voucher.cumulativeAmount) > BigInt(waiting.voucher.cumulativeAmount)) {
        Object.assign(waiting, { peerId, requestId, voucher });
      }
      waiting.failures = Math.max(waiting.failures, failures);
      return;
    }
    const timer = setTimeout(() => this.sendWaiting(channelId), delayMs);
    timer.unref();
    this.waiting.set(channelId, { peerId, requestId, voucher, timer, failures });
  }

  private sendWaiting(channelId: string): void {
    const waiting = this.waiting.get(channelId);
    if (!waiting) return;
    this.waiting.delete(channelId);
    clearTimeout(waiting.timer);
    const carried = this.carriedToSeller.get(channelId) ?? -1n;
    if (carried >= BigInt(waiting.voucher.cumulativeAmount)) return;
    this.send(waiting.peerId, waiting.requestId, waiting.voucher, waiting.failures);
  }

  /** Signs a stream delivered before a crash (docs/decisions/154-late-voucher-after-a-crash.md) and sends its voucher. */
  async payLate(input: LatePaymentInput): Promise<CompleteOutcome | undefined> {
    const result = await this.options.payments.payLate(input);
    if (!result) return undefined;
    if (result.voucher) this.send(input.peerId, input.requestId, result.voucher);
    return { amountMicro: result.amountMicro };
  }

  /** Sends a signed voucher in the background; a failed delivery is tried again later. */
  private send(peerId: PeerId, requestId: string, voucher: VoucherMessage, failures = 0): void {
    const { deliver } = this.options;
    if (!deliver) return;
    const delivery = deliver(peerId, voucher)
      .then((reply) => {
        if (!reply.ok) {
          this.options.logger.warn(
            { peerId, requestId, error: reply.error },
            'seller refused the voucher',
          );
        }
      })
      .catch((error: unknown) => {
        // Not fatal: the next request's payment object carries the same voucher, and until one
        // does it is sent again (a seller no request goes to any more would never get it).
        this.options.logger.debug(
          { peerId, err: String(error) },
          'voucher delivery failed; it rides on the next request or is sent again',
        );
        if (failures + 1 >= MAX_DELIVERY_TRIES) return;
        const delayMs = (this.options.retryDelayMs ?? retryDelayMs)(failures);
        this.sendUnlessCarried(peerId, requestId, voucher, delayMs, failures + 1);
      });
    // The answer's cost is reported once the voucher is signed; its delivery (a round trip to the
    // seller) does not hold the answer. `idle()` waits for deliveries under way.
    this.deliveries.add(delivery);
    void delivery.finally(() => this.deliveries.delete(delivery));
  }

  /** Sends at once the vouchers whose delivery to `peerId` failed (it was seen alive again). */
  sellerBack(peerId: PeerId): void {
    for (const [channelId, waiting] of [...this.waiting]) {
      if (waiting.peerId === peerId && waiting.failures > 0) this.sendWaiting(channelId);
    }
  }

  release(
    requestId: string,
    sellerError?: { code?: string; details?: Record<string, unknown> },
  ): void {
    this.carried.delete(requestId);
    this.options.payments.release(requestId, sellerError);
  }

  /** Sends the vouchers waiting to be carried now, and waits for deliveries under way (before shutdown). */
  async idle(): Promise<void> {
    for (const channelId of [...this.waiting.keys()]) this.sendWaiting(channelId);
    await Promise.allSettled([...this.deliveries]);
  }
}
