/** Payments: EIP-712 reserve/voucher signatures, buyer and seller payment services, metering, reputation. */
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
  type VoucherMessage,
  voucherDigest,
  voucherSigner,
} from './signatures.js';
