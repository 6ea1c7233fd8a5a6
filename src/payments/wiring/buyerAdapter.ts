/**
 * The payments service behind the buyer's `BuyerPayments` seam (decision 072): `prepare` opens or
 * reuses the identity's channel and returns the payment object; `complete` checks the seller's
 * claim against the buyer's own token count, signs the cumulative voucher and delivers it to the
 * seller on `/svc/voucher/1` (the next request's payment object carries it too); `payLate` does
 * the same for a stream delivered before a crash; `release` frees a request that delivered nothing.
 */
import type {
  BuyerPayments as BuyerPaymentsSeam,
  CompleteInput,
  CompleteOutcome,
  LatePaymentInput,
  PrepareInput,
} from '../../buyer/index.js';
import type { PeerId } from '../../identity/index.js';
import type { Logger } from '../../log/index.js';
import type { BuyerPaymentService } from '../buyer/BuyerPaymentService.js';
import type { VoucherMessage, VoucherReply } from '../wire.js';

export interface BuyerPaymentsAdapterOptions {
  payments: BuyerPaymentService;
  /** Sends a voucher to the seller (e.g. `sendVoucher` on the buyer's libp2p node). */
  deliver?: (peerId: PeerId, voucher: VoucherMessage) => Promise<VoucherReply>;
  logger: Logger;
}

/** Adapts `BuyerPaymentService` (src/payments) to the buyer's `BuyerPayments` seam (src/buyer). */
export class BuyerPaymentsAdapter implements BuyerPaymentsSeam {
  private readonly options: BuyerPaymentsAdapterOptions;
  private readonly deliveries = new Set<Promise<unknown>>();

  constructor(options: BuyerPaymentsAdapterOptions) {
    this.options = options;
  }

  async prepare(input: PrepareInput): Promise<object | undefined> {
    // A failover attempt of the same request: the earlier attempt's reservation is void.
    this.options.payments.release(input.requestId);
    return this.options.payments.prepare(input);
  }

  async complete(input: CompleteInput): Promise<CompleteOutcome> {
    const result = await this.options.payments.complete({
      requestId: input.requestId,
      peerId: input.peerId,
      claimed: input.claimed,
      estimatedUsage: input.estimatedUsage,
      price: input.price,
      ...(input.serviceId !== undefined ? { serviceId: input.serviceId } : {}),
      ...(input.units ? { units: true } : {}),
      ...(input.onCommit ? { onCommit: input.onCommit } : {}),
    });
    if (result.voucher) this.send(input.peerId, input.requestId, result.voucher);
    return { amountMicro: result.amountMicro };
  }

  /** Signs a stream delivered before a crash (docs/decisions/154-late-voucher-after-a-crash.md) and sends its voucher. */
  async payLate(input: LatePaymentInput): Promise<CompleteOutcome | undefined> {
    const result = await this.options.payments.payLate(input);
    if (!result) return undefined;
    if (result.voucher) this.send(input.peerId, input.requestId, result.voucher);
    return { amountMicro: result.amountMicro };
  }

  /** Sends a signed voucher in the background; a failure is not fatal. */
  private send(peerId: PeerId, requestId: string, voucher: VoucherMessage): void {
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
        // Not fatal: the next request's payment object carries the same voucher.
        this.options.logger.debug(
          { peerId, err: String(error) },
          'voucher delivery failed; it rides on the next request',
        );
      });
    // The answer's cost is reported once the voucher is signed; its delivery (a round trip to the
    // seller) does not hold the answer. `idle()` waits for deliveries under way.
    this.deliveries.add(delivery);
    void delivery.finally(() => this.deliveries.delete(delivery));
  }

  release(
    requestId: string,
    sellerError?: { code?: string; details?: Record<string, unknown> },
  ): void {
    this.options.payments.release(requestId, sellerError);
  }

  /** Waits for voucher deliveries under way (before shutdown). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.deliveries]);
  }
}
