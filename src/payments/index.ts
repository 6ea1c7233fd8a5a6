/**
 * Payments: deposits, channels and vouchers on chain, for the buyer (`BuyerPayments`) and the
 * seller (`SellerPayments`), the wire messages between them, and seller reputation.
 */
export {
  BuyerChannels,
  type BuyerChannelsDeps,
  type MeteringEntry,
  readStoredChannels,
  toMeteringEntry,
} from './buyer/BuyerChannels.js';
export { BuyerPayments, pairKey } from './buyer/BuyerPayments.js';
export {
  type ClaimCheck,
  type ClaimCheckInput,
  type ClaimRefusal,
  type ClaimTolerance,
  checkClaim,
} from './buyer/checkClaim.js';
export {
  DepositSweeper,
  type DepositSweeperOptions,
  type SweepPlan,
  type SweepResult,
} from './buyer/DepositSweeper.js';
export type {
  GasPayer,
  GasShortfall,
  RelayerResolution,
} from './buyer/depositGas.js';
export type { BuyerChannelRow, BuyerChannelStatus } from './buyer/store.js';
export type {
  BuyerPaymentsOptions,
  ClaimRefusedEvent,
  CompleteArgs,
  CompleteResult,
  IdentitySource,
  PrepareArgs,
} from './buyer/types.js';
export { type Clock, systemClock } from './clock.js';
export {
  type CreateBuyerPaymentsOptions,
  type CreateSellerPaymentsOptions,
  createBuyerPayments,
  createSellerPayments,
  openBuyerPayments,
} from './factories.js';
export { isFailedAnswer, wholeAnswerFinished } from './failedAnswer.js';
export {
  ReputationReader,
  type ReputationReaderOptions,
  type SellerReputation,
  trustScore,
} from './reputation.js';
export {
  type SellerAdmission,
  type SellerOffer,
  SellerPayments,
  type SellerPaymentsOptions,
} from './seller/SellerPayments.js';
export type { SellerChannelRow, SellerChannelStatus } from './seller/store.js';
export {
  channelIdOf,
  isReserveSignedByBuyer,
  isVoucherSignedBy,
  type PaymentsDomain,
  RESERVE_TYPES,
  type ReserveMessage,
  reserveDigest,
  reserveSigner,
  signReserve,
  signVoucher,
  typedDataDomain,
  VOUCHER_TYPES,
  voucherDigest,
  voucherSigner,
} from './signatures.js';
export {
  decodeVoucherMessage,
  decodeVoucherReply,
  deliverVoucher,
  encodeVoucherMessage,
  encodeVoucherReply,
  MAX_VOUCHER_MESSAGE_BYTES,
  PAYMENT_WIRE_VERSION,
  type PaymentObject,
  parsePaymentObject,
  paymentObjectSchema,
  VOUCHER_PROTOCOL,
  type VoucherMessage,
  type VoucherReply,
} from './wire.js';
export { BuyerPaymentsAdapter, type BuyerPaymentsAdapterOptions } from './wiring/buyerAdapter.js';
export { ChainReputation, type ChainReputationOptions } from './wiring/chainReputation.js';
export {
  type PaidBuyerNode,
  type StartPaidBuyerOptions,
  startPaidBuyerNode,
} from './wiring/paidBuyer.js';
export {
  configuredChain,
  hasPricedOffers,
  type PaidSellerHandle,
  SellerPaymentsHook,
  type StartPaidSellerOptions,
  startPaidSeller,
} from './wiring/paidSeller.js';
export { sendVoucher, serveVouchers } from './wiring/voucherProtocol.js';
