/** The channel bookkeeping after a served request: what is billed, and the channel row after it. */
import type { MicroUsd, TokenUsage } from '../../money/index.js';
import { maxBig } from '../amounts.js';
import type { checkClaim } from './checkClaim.js';
import type { BuyerChannelRow } from './store.js';

type Claim = ReturnType<typeof checkClaim>;

/** A billed request: its amount, the channel's new cumulative amount and the row after it. */
export interface Billed {
  amountMicro: MicroUsd;
  cumulativeMicro: MicroUsd;
  row: BuyerChannelRow;
}

/** `amount`, never past the room the channel's authorised lock leaves. */
function withinLock(channel: BuyerChannelRow, amount: MicroUsd): MicroUsd {
  const room = channel.authorisedLockMicro - channel.signedMicro;
  if (amount <= room) return amount;
  return room > 0n ? room : 0n;
}

/**
 * Bills the accepted amount (never past the channel's authorised lock) and returns the amount
 * with the updated row; the voucher signature is added by the caller when the amount is positive.
 */
export function billChannel(
  channel: BuyerChannelRow,
  claim: Claim,
  sentUnderLockMicro: bigint,
  nowMs: number,
): Billed {
  const amount = withinLock(channel, claim.billedMicro);
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

/**
 * Bills a stream delivered before a crash (docs/decisions/154-late-voucher-after-a-crash.md): the
 * buyer's own count, no claim, within the lock.
 */
export function billLate(
  channel: BuyerChannelRow,
  amountMicro: MicroUsd,
  usage: TokenUsage,
  nowMs: number,
): Billed {
  const amount = withinLock(channel, amountMicro);
  return {
    amountMicro: amount,
    cumulativeMicro: channel.signedMicro + amount,
    row: {
      ...channel,
      requests: channel.requests + 1,
      inputTokens: channel.inputTokens + usage.inputTokens,
      cachedInputTokens: channel.cachedInputTokens + usage.cachedInputTokens,
      outputTokens: channel.outputTokens + usage.outputTokens,
      updatedAtMs: nowMs,
    },
  };
}
