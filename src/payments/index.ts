/**
 * Payments: deposits, channels and vouchers on chain, for the buyer (`BuyerPaymentService`) and the
 * seller (`SellerPaymentService`), the wire messages between them, and seller reputation.
 */
export {
  BuyerChannels,
  type BuyerChannelsDeps,
  type MeteringEntry,
  readStoredChannels,
  toMeteringEntry,
} from './buyer/BuyerChannels.js';
export { BuyerPaymentService, pairKey } from './buyer/BuyerPaymentService.js';
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
  LatePayArgs,
  PrepareArgs,
  SignedIncrement,
} from './buyer/types.js';
export { type Clock, systemClock } from './clock.js';
export {
  assertPaymentsContract,
  checkPaymentsContract,
  type PaymentsContractCheck,
  paymentsContractMismatch,
} from './contractCheck.js';
export {
  type CreateBuyerPaymentsOptions,
  type CreateSellerPaymentsOptions,
  createBuyerPayments,
  createSellerPayments,
  openBuyerPayments,
} from './factories.js';
export {
  NEW_SELLER_DAYS,
  NEW_SELLER_SCORE_CAP,
  ReputationReader,
  type ReputationReaderOptions,
  type SellerReputation,
  trustScore,
} from './reputation.js';
export {
  type SellerAdmission,
  SellerPaymentService,
  type SellerPaymentsOptions,
  type ServedOffer,
} from './seller/SellerPaymentService.js';
export type { SellerChannelRow, SellerChannelStatus } from './seller/store.js';
export {
  channelIdOf,
  isReserveSignedByBuyer,
  isVoucherSignedBy,
  type PaymentsDomain,
  paymentsDomainSeparator,
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
export {
  ChainReputation,
  type ChainReputationOptions,
  PENALTY_MEMORY_MS,
} from './wiring/chainReputation.js';
export { SellerPaymentsHook } from './wiring/sellerAdapter.js';
export { VoucherPayments, type VoucherPaymentsOptions } from './wiring/voucherPayments.js';
export { sendVoucher, serveVouchers } from './wiring/voucherProtocol.js';
