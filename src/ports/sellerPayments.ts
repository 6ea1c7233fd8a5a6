/**
 * The seller's payments port: `admit` before relaying upstream, `record` after. src/payments
 * implements it with channel checks and vouchers; it sits below both so the payments never import
 * the seller (docs/decisions/182-folder-floors-checked.md).
 */
import type { PeerId } from '../identity/index.js';
import type { MicroUsd, TokenPricing, TokenUsage } from '../money/index.js';
import type { PeerCapabilities } from '../network/index.js';

/** The offer a request was made against. */
export interface SellerOffer {
  /** The seller's own peer id. */
  sellerPeerId: PeerId;
  provider: string;
  serviceId: string;
  pricing: TokenPricing;
}

/** Facts about the request beyond the seam's positional arguments. */
export interface SellerPaymentContext {
  requestId: string;
  buyerPeerId: PeerId;
}

export interface SellerPayments {
  /** Throws SvcError (402 `payment_required`/`insufficient_deposits`...) to refuse the request. */
  admit(
    payment: Record<string, unknown> | undefined,
    offer: SellerOffer,
    maxCostMicro: MicroUsd,
    context: SellerPaymentContext,
  ): Promise<void>;
  /** Called once the seller knows the usage it bills. */
  record(
    requestId: string,
    usage: TokenUsage,
    costMicro: MicroUsd,
    context: SellerPaymentContext & { payment?: Record<string, unknown>; offer: SellerOffer },
  ): Promise<void>;
  /**
   * True the first time `key` is claimed, false ever after: a video job is billed at its first
   * delivery only. Implementations that keep payments on disk persist it, so a restart never
   * bills a second download; without one the seller remembers in memory.
   */
  claimOnce?(key: string): boolean;
  /** Where this seller is paid, announced in metadata (absent: free offers only). */
  capabilities?(): PeerCapabilities['payments'];
}
