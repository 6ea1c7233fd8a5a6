/** The channel bookkeeping after a served request: what is billed, and the channel row after it. */
import { maxBig } from '../amounts.js';
import type { checkClaim } from './checkClaim.js';
import type { BuyerChannelRow } from './store.js';

type Claim = ReturnType<typeof checkClaim>;

/**
 * Bills the accepted amount (never past the channel's authorised lock) and returns the amount
 * with the updated row; the voucher signature is added by the caller when the amount is positive.
 */
export function billChannel(
  channel: BuyerChannelRow,
  claim: Claim,
  sentUnderLockMicro: bigint,
  nowMs: number,
): { amountMicro: bigint; cumulativeMicro: bigint; row: BuyerChannelRow } {
  const room = channel.authorisedLockMicro - channel.signedMicro;
  let amount = claim.billedMicro;
  if (amount > room) amount = room > 0n ? room : 0n;
  return {
    amountMicro: amount,
    cumulativeMicro: channel.signedMicro + amount,
    row: {
      ...channel,
      // The seller served, so the lock this request was sent under is on chain (a later
      // increase authorised by a concurrent request may not be yet).
      confirmedLockMicro: maxBig(channel.confirmedLockMicro, sentUnderLockMicro),
      requests: channel.requests + 1,
      inputTokens: channel.inputTokens + claim.billedUsage.inputTokens,
      cachedInputTokens: channel.cachedInputTokens + claim.billedUsage.cachedInputTokens,
      outputTokens: channel.outputTokens + claim.billedUsage.outputTokens,
      refusedClaims: channel.refusedClaims + (claim.accepted ? 0 : 1),
      updatedAtMs: nowMs,
    },
  };
}
