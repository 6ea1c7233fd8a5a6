/**
 * Ports: the interfaces the buyer and the seller call for payments, which src/payments
 * implements. Below all three (js-libp2p's interface package), so neither side imports the other.
 */
export type {
  BuyerPayments,
  CompleteInput,
  CompleteOutcome,
  LatePaymentInput,
  PrepareInput,
} from './buyerPayments.js';
export type { SellerOffer, SellerPaymentContext, SellerPayments } from './sellerPayments.js';
