/** The voucher of one billed request: signed, then the channel and the request's voucher row stored. */
import type { LocalAccount } from 'viem/accounts';
import type { MicroUsd } from '../../money/index.js';
import { type PaymentsDomain, signVoucher } from '../signatures.js';
import type { VoucherMessage } from '../wire.js';
import type { Billed } from './billChannel.js';
import type { BuyerStore } from './store.js';
import type { SignedIncrement } from './types.js';

export interface SigningContext {
  account: LocalAccount;
  domain: PaymentsDomain;
  store: BuyerStore;
  nowMs: number;
}

/**
 * Signs the cumulative voucher of a billed request (when its amount is positive) and stores the
 * channel row and the request's voucher row; a failure to sign stores nothing. Runs in the
 * channel's queue lane (`pairKey`).
 */
export async function signIncrement(
  context: SigningContext,
  billed: Billed,
  requestId: string,
  claim: { claimedMicro: MicroUsd; estimatedMicro: MicroUsd; refused: boolean },
): Promise<SignedIncrement> {
  const { amountMicro: amount, cumulativeMicro: cumulative, row: updated } = billed;
  let voucher: VoucherMessage | undefined;
  if (amount > 0n) {
    const signature = await signVoucher(context.account, context.domain, {
      channelId: updated.channelId,
      cumulativeAmount: cumulative,
    });
    updated.signedMicro = cumulative;
    updated.voucherSignature = signature;
    voucher = {
      v: 1,
      channelId: updated.channelId,
      requestId,
      amountMicro: amount.toString(),
      cumulativeAmount: cumulative.toString(),
      signature,
    };
  }
  context.store.put(updated);
  context.store.addVoucher({
    requestId,
    channelId: updated.channelId,
    amountMicro: amount,
    cumulativeMicro: updated.signedMicro,
    ...claim,
    createdAtMs: context.nowMs,
  });
  return {
    amountMicro: amount,
    cumulativeMicro: updated.signedMicro,
    ...(voucher ? { voucher } : {}),
  };
}
