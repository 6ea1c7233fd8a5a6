/**
 * The payment object a paid request carries to the seller (src/payments/wire.ts): the channel,
 * the request's cap, the pending reserve when the lock grew and is not on chain yet, and the
 * latest cumulative voucher (so a seller that missed one on `/svc/voucher/1` still gets it).
 */
import type { MicroUsd } from '../../money/index.js';
import type { PaymentsDomain } from '../signatures.js';
import type { PaymentObject } from '../wire.js';
import type { BuyerChannelRow } from './store.js';

export function paymentObjectOf(
  domain: PaymentsDomain,
  channel: BuyerChannelRow,
  requestId: string,
  maxCostMicro: MicroUsd,
): PaymentObject {
  const payment: PaymentObject = {
    v: 1,
    chainId: domain.chainId,
    paymentsContract: domain.paymentsAddress,
    buyer: channel.buyer,
    channelId: channel.channelId,
    salt: channel.salt,
    requestId,
    maxCostMicro: maxCostMicro.toString(),
  };
  if (channel.authorisedLockMicro > channel.confirmedLockMicro && channel.reserveSignature) {
    payment.reserve = {
      maxAmount: channel.authorisedLockMicro.toString(),
      deadline: channel.reserveDeadline.toString(),
      signature: channel.reserveSignature,
    };
  }
  if (channel.voucherSignature && channel.signedMicro > 0n) {
    payment.voucher = {
      cumulativeAmount: channel.signedMicro.toString(),
      signature: channel.voucherSignature,
    };
  }
  return payment;
}
