/**
 * The answer a client received, for an audit of real answers
 * (docs/decisions/221-audits-of-real-answers.md): built only for a request the auditor sampled,
 * from what the buyer already holds (a whole answer's body, a stream's scanned events), with the
 * seller's receipt when it verifies, and the bytes it covers for a whole answer. Nothing here
 * runs for a request the auditor did not sample.
 */
import type { DeliveredBody } from '../audit/index.js';
import type { SellerTrailer } from '../network/index.js';
import { PRESET_PREFIX, type PreferenceNarrowing, parsePinnedModel } from '../routing/index.js';
import type { ProxyContext } from './context.js';
import type { Delivery } from './delivery.js';
import { verifyAnswerReceipt } from './receiptCheck.js';
import type { StreamUsageScanner } from './usage.js';

/** What the buyer saw of an answer besides the delivery: the seller's trailer, a stream's scan. */
export interface SeenAnswer {
  trailer: SellerTrailer | undefined;
  scanner?: StreamUsageScanner;
}

/**
 * True when a narrowing chooses or excludes sellers beyond the buyer's own preferences (seller
 * lists, a higher trust floor), not only prices, sort or models.
 */
function namesSellers(narrowing: PreferenceNarrowing | undefined, ownMinTrust: number): boolean {
  if (narrowing === undefined) return false;
  const { allowedPeerIds, blockedPeerIds, minTrustScore } = narrowing;
  return (
    (allowedPeerIds?.length ?? 0) > 0 ||
    (blockedPeerIds?.length ?? 0) > 0 ||
    (minTrustScore ?? 0) > ownMinTrust
  );
}

/**
 * Why the request's content must stay with the sellers its own routing admitted, if it must:
 * references are chosen by the buyer's own preferences, so a request that pinned a seller or
 * came with seller lists or a trust floor of its own (a gateway key's policy, a preset's) is
 * never sent to them.
 */
export function keptToItsSellers(ctx: ProxyContext): string | undefined {
  const { limits, body } = ctx.request;
  const { config } = ctx.service.deps;
  const ownMinTrust = config.routingPreferences.minTrustScore;
  if (limits.pin !== undefined) return 'the request pinned its seller';
  if (namesSellers(limits.policy, ownMinTrust)) return 'a gateway policy chose its sellers';
  const model = typeof body.model === 'string' ? body.model.trim() : '';
  if (parsePinnedModel(model)) return 'the request pinned its seller';
  if (model.startsWith(PRESET_PREFIX)) {
    const preset = config.presets[model.slice(PRESET_PREFIX.length)];
    if (namesSellers(preset?.routingPreferences, ownMinTrust))
      return 'its preset chose its sellers';
  }
  return undefined;
}

/** The delivered answer as an audit records it. */
export function deliveredBodyOf(delivery: Delivery, seen: SeenAnswer): DeliveredBody {
  const { candidate, ok } = delivery;
  const { sellerProtocol } = candidate;
  const check = verifyAnswerReceipt(delivery, seen.trailer);
  const receipt = check?.ok ? check.receipt : undefined;
  if (ok.whole) {
    if (!receipt || ok.sent.multipart) return { sellerProtocol, body: ok.whole };
    return {
      sellerProtocol,
      body: ok.whole,
      evidence: {
        receipt,
        request: { method: 'POST', path: ok.sent.path, body: ok.sent.body },
        response: { status: ok.response.status, body: ok.whole },
        sellerProtocol,
        peerId: candidate.offer.peerId,
        serviceId: candidate.offer.serviceId,
      },
    };
  }
  return {
    sellerProtocol,
    ...(seen.scanner ? { events: seen.scanner.eventData } : {}),
    ...(receipt ? { receipt: receipt as unknown as Record<string, unknown> } : {}),
  };
}
