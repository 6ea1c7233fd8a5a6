/**
 * Checks a seller's usage claim against the buyer's own token count and the advertised price
 * (decision 033). Hidden reasoning tokens are taken as claimed; the visible output is checked. Pure: no I/O. The buyer signs the claimed cost when every token field is within
 * the tolerance of its estimate and the claimed cost is not above the advertised price; otherwise
 * it signs its own estimate's cost and reports the seller. Never more than the request's cap.
 * A claim whose receipt was refused (decision 168) is refused too, and paid the lower of what the
 * check would pay and the estimate: a bad receipt never makes the buyer pay more.
 */
import {
  costOfUsage,
  type MicroUsd,
  type TokenPriceMicro,
  type TokenUsage,
} from '../../money/index.js';
import type { SellerTrailer } from '../../network/index.js';

export interface ClaimTolerance {
  /** Percent over the estimate a claim may be (e.g. 10). */
  percent: number;
  /** Extra tokens allowed per field (tokenizer differences on short texts). */
  slackTokens: number;
}

export interface ClaimCheckInput {
  claimed: SellerTrailer | undefined;
  estimatedUsage: TokenUsage;
  price: TokenPriceMicro;
  /** The most the buyer agreed to pay for this request. */
  maxCostMicro: MicroUsd;
  tolerance: ClaimTolerance;
  /** The seller's receipt of the answer was missing or bad. */
  receiptRefused?: boolean;
}

export type ClaimRefusal =
  | 'tokens_over_estimate'
  | 'cost_above_price'
  | 'invalid_usage'
  | 'receipt_refused';

export interface ClaimCheck {
  accepted: boolean;
  /** What the buyer pays for this request. */
  billedMicro: MicroUsd;
  /** Usage the payment is based on (the claim when accepted, else the estimate). */
  billedUsage: TokenUsage;
  claimedMicro: MicroUsd;
  estimatedMicro: MicroUsd;
  reason?: ClaimRefusal;
}

function withinTolerance(claimed: number, estimated: number, tolerance: ClaimTolerance): boolean {
  const basisPoints = BigInt(Math.round(tolerance.percent * 100));
  const limit =
    BigInt(estimated) * (10_000n + basisPoints) + BigInt(tolerance.slackTokens) * 10_000n;
  return BigInt(claimed) * 10_000n <= limit;
}

function validUsage(usage: TokenUsage): boolean {
  const reasoning = usage.reasoningTokens ?? 0;
  return (
    [usage.inputTokens, usage.cachedInputTokens, usage.outputTokens, reasoning].every(
      (value) => Number.isSafeInteger(value) && value >= 0,
    ) &&
    usage.cachedInputTokens <= usage.inputTokens &&
    reasoning <= usage.outputTokens
  );
}

function cap(amount: MicroUsd, max: MicroUsd): MicroUsd {
  return amount > max ? max : amount;
}

/** Decides what to pay for one request. */
export function checkClaim(input: ClaimCheckInput): ClaimCheck {
  const checked = checkUsageClaim(input);
  if (!input.receiptRefused) return checked;
  // Without a receipt that holds, the claim is not the seller's word: the lower of the two.
  const estimated = cap(checked.estimatedMicro, input.maxCostMicro);
  const lower =
    checked.billedMicro <= estimated
      ? checked
      : { ...checked, billedMicro: estimated, billedUsage: input.estimatedUsage };
  return { ...lower, accepted: false, reason: 'receipt_refused' };
}

function checkUsageClaim(input: ClaimCheckInput): ClaimCheck {
  const { estimatedUsage, price, maxCostMicro, tolerance } = input;
  const estimatedMicro = costOfUsage(estimatedUsage, price);
  const refuse = (reason: ClaimRefusal, claimedMicro: MicroUsd): ClaimCheck => ({
    accepted: false,
    billedMicro: cap(estimatedMicro, maxCostMicro),
    billedUsage: estimatedUsage,
    claimedMicro,
    estimatedMicro,
    reason,
  });
  const usage = input.claimed?.usage;
  if (!usage) {
    // No claim (e.g. a stream cut short): pay for what the buyer itself saw delivered.
    return {
      accepted: true,
      billedMicro: cap(estimatedMicro, maxCostMicro),
      billedUsage: estimatedUsage,
      claimedMicro: estimatedMicro,
      estimatedMicro,
    };
  }
  if (!validUsage(usage)) return refuse('invalid_usage', 0n);
  const claimedMicro = costOfUsage(usage, price);
  const statedCost = input.claimed?.costMicroUsd;
  if (
    statedCost !== undefined &&
    (!/^\d{1,30}$/.test(statedCost) || BigInt(statedCost) > claimedMicro)
  ) {
    return refuse(
      'cost_above_price',
      /^\d{1,30}$/.test(statedCost) ? BigInt(statedCost) : claimedMicro,
    );
  }
  // Hidden reasoning cannot be counted by the buyer: only the visible output is checked, and
  // the request's cap (max tokens x price) bounds what reasoning can cost.
  const visibleOutput = usage.outputTokens - (usage.reasoningTokens ?? 0);
  const tokensOk =
    withinTolerance(usage.inputTokens, estimatedUsage.inputTokens, tolerance) &&
    withinTolerance(visibleOutput, estimatedUsage.outputTokens, tolerance);
  if (!tokensOk) return refuse('tokens_over_estimate', claimedMicro);
  // A seller may bill less than its price (a discount); never more.
  const billed = statedCost !== undefined ? BigInt(statedCost) : claimedMicro;
  return {
    accepted: true,
    billedMicro: cap(billed, maxCostMicro),
    billedUsage: usage,
    claimedMicro: billed,
    estimatedMicro,
  };
}
