/**
 * The seller's default for its payments port (src/ports/sellerPayments.ts): admits every request
 * until the payments capability supplies the real one.
 */
import type { SellerPayments } from '../ports/index.js';

export type { SellerOffer, SellerPaymentContext, SellerPayments } from '../ports/index.js';

/** Admits everything and records nothing: for free offers and development. */
export class AdmitAllPayments implements SellerPayments {
  async admit(): Promise<void> {}
  async record(): Promise<void> {}
}
