/**
 * The parts every delivered answer shares (text whole, text stream, media): seller headers, the
 * usage it is billed at, the seller's trailer and what the buyer remembers of the seller. Payment
 * is src/buyer/commitCost.ts.
 */
import type { TokenUsage } from '../money/index.js';
import type { SellerTrailer } from '../network/index.js';
import { encodeSellerHeaders } from '../protocol/index.js';
import type { RouteCandidate } from '../routing/index.js';
import type { AttemptOk } from './attempt.js';
import type { ProxyContext } from './context.js';
import { countTextTokensAsync } from './tokenCount.js';

/** Longest wait for the seller's usage claim after its body ended. */
const TRAILER_WAIT_MS = 2_000;

/** Request id, seller identity and price headers (sent on streams too). */
export function sellerHeaders(
  ctx: ProxyContext,
  candidate: RouteCandidate,
): Record<string, string> {
  const { offer } = candidate;
  const pricing = offer.pricing;
  return encodeSellerHeaders({
    requestId: ctx.request.id,
    peerId: offer.peerId,
    provider: offer.provider,
    service: offer.serviceId,
    model: offer.modelName,
    inputUsdPerMillion: String(pricing.inputUsdPerMillion),
    outputUsdPerMillion: String(pricing.outputUsdPerMillion),
    // Without an advertised cached price, cached tokens bill at the input price.
    cachedInputUsdPerMillion: String(
      pricing.cachedInputUsdPerMillion ?? pricing.inputUsdPerMillion,
    ),
    peerReputation:
      candidate.reputationScore === undefined ? 'unscored' : String(candidate.reputationScore),
    attempts: ctx.attempts.join(', ') || 'none',
  });
}

/** The usage the answer is billed at: the seller's report, else the buyer's own estimate. */
export interface SettledUsage {
  usage: TokenUsage;
  source: 'usage' | 'estimated';
  /** The buyer's own count (for the claim check). */
  estimate: () => Promise<TokenUsage>;
}

// The estimate counts what strangers sent and served, so it counts through the tokenizer's
// yielding path (decision 100).
export async function settleUsage(
  reported: TokenUsage | undefined,
  claimed: TokenUsage | undefined,
  inputTokens: () => Promise<number>,
  outputText: () => string,
): Promise<SettledUsage> {
  let estimated: Promise<TokenUsage> | undefined;
  const estimate = () => {
    estimated ??= Promise.all([inputTokens(), countTextTokensAsync(outputText())]).then(
      ([input, output]) => ({ inputTokens: input, cachedInputTokens: 0, outputTokens: output }),
    );
    return estimated;
  };
  const usage = reported ?? claimed;
  if (usage && usage.cachedInputTokens <= usage.inputTokens)
    return { usage, source: 'usage', estimate };
  return { usage: await estimate(), source: 'estimated', estimate };
}

/**
 * The seller's usage claim (its trailer), or undefined when none came within 2 s. A whole answer's
 * body was read to its end, when the trailer has settled (the transport's contract): no timer.
 */
export function trailerOf(ok: AttemptOk): Promise<SellerTrailer | undefined> {
  if (ok.whole) return ok.response.trailer.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const trailer = Promise.race([
    ok.response.trailer.catch(() => undefined),
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), TRAILER_WAIT_MS);
      timer.unref();
    }),
  ]);
  // Once settled, the timer only keeps this request's objects alive: drop it.
  void trailer.then(() => clearTimeout(timer));
  return trailer as Promise<SellerTrailer | undefined>;
}

/** Health and affinity after a delivered answer. */
export function rememberSeller(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  affinityKey: string | undefined,
): void {
  const { service } = ctx;
  service.health.recordSuccess(candidate.offer.peerId);
  if (affinityKey) service.affinity.remember(affinityKey, candidate.offer.peerId);
}

/** The record fields naming the seller. */
export function servedBy(candidate: RouteCandidate, streamed: boolean) {
  const { offer } = candidate;
  return {
    streamed,
    peerId: offer.peerId,
    provider: offer.provider,
    serviceId: offer.serviceId,
    model: offer.modelName,
  };
}
