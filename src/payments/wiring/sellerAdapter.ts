/**
 * The payments service behind the seller's `SellerPayments` seam (decision 070): admits a request
 * against its channel and records what it billed.
 */
import type { MicroUsd, TokenUsage } from '../../money/index.js';
import { toPriceMicro } from '../../money/index.js';
import type { PeerCapabilities } from '../../network/index.js';
import type { SellerOffer, SellerPayments } from '../../ports/index.js';
import type { SellerPaymentService } from '../seller/SellerPaymentService.js';

/** The payments service behind the seller's `SellerPayments` seam. */
export class SellerPaymentsHook implements SellerPayments {
  constructor(private readonly payments: SellerPaymentService) {}

  async admit(
    payment: Record<string, unknown> | undefined,
    offer: SellerOffer,
    maxCostMicro: MicroUsd,
  ): Promise<void> {
    // The buyer's declared bound is what it locked for this request: the seller admits (and
    // later bills at most) that, rather than its own rougher estimate from body bytes, which
    // would not fit a lock sized exactly to the buyer's bound (decision 070).
    const declared = payment?.maxCostMicro;
    const bound =
      typeof declared === 'string' && /^[0-9]{1,30}$/.test(declared) ? 0n : maxCostMicro;
    await this.payments.admit(payment, { price: toPriceMicro(offer.pricing) }, bound);
  }

  async record(requestId: string, usage: TokenUsage, costMicro: MicroUsd): Promise<void> {
    this.payments.record(requestId, usage, costMicro);
  }

  claimOnce(key: string): boolean {
    return this.payments.claimOnce(key);
  }

  capabilities(): PeerCapabilities['payments'] {
    return this.payments.paymentsInfo;
  }
}
