/**
 * The answer a client received, for an audit of real answers
 * (docs/decisions/221-audits-of-real-answers.md): built only for a request the auditor sampled,
 * from what the buyer already holds (a whole answer's body, a stream's scanned events), with the
 * seller's receipt when it verifies, and the bytes it covers for a whole answer. Nothing here
 * runs for a request the auditor did not sample.
 */
import type { DeliveredBody } from '../audit/index.js';
import type { SellerTrailer } from '../network/index.js';
import type { Delivery } from './delivery.js';
import { verifyAnswerReceipt } from './receiptCheck.js';
import type { StreamUsageScanner } from './usage.js';

/** What the buyer saw of an answer besides the delivery: the seller's trailer, a stream's scan. */
export interface SeenAnswer {
  trailer: SellerTrailer | undefined;
  scanner?: StreamUsageScanner;
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
