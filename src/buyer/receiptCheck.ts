/**
 * The buyer checks the seller's receipt of every delivered answer
 * (docs/decisions/168-receipts-anyone-can-check.md): signed by the seller's peer key, naming this
 * buyer and the service asked for, over the request hash of what the buyer sent and the response
 * hash of what it received, with claims equal to the trailer's, dated now. A missing or bad receipt
 * is refused: counted (metric and request record), logged, the seller penalised like a refused
 * usage claim, and the payment (src/buyer/commitCost.ts) never above what the buyer itself counted.
 * An audit's verified receipt is kept with its bytes, as evidence (src/buyer/evidence.ts).
 */
import type { ReceiptCheck, ReceiptRefusal, SellerTrailer } from '../network/index.js';
import { verifyReceipt } from '../network/index.js';
import { isAudit, type ProxyContext } from './context.js';
import type { Delivery } from './delivery.js';

/**
 * `checkReceipt` once the answer just written to the client has gone out (Node writes a
 * response's end on the next tick, and an immediate runs after it), off the client's path: for
 * answers whose receipt changes no amount the client is told.
 */
async function checkReceiptAfterAnswer(
  ctx: ProxyContext,
  delivery: Delivery,
  trailer: SellerTrailer | undefined,
): Promise<ReceiptOutcome | undefined> {
  if (trailer === undefined || delivery.ok.response.exchange?.() === undefined) return undefined;
  await new Promise((resolve) => setImmediate(resolve));
  return checkReceipt(ctx, delivery, trailer);
}

/**
 * An unpaid answer's receipt, checked after the answer, as record fields (a paid one's was
 * checked before paying): an audit's always, others as src/buyer/receiptSample.ts draws.
 */
export async function checkUnpaidReceipt(
  ctx: ProxyContext,
  delivery: Delivery,
  trailer: SellerTrailer | undefined,
): Promise<{ receipt?: ReceiptOutcome }> {
  if (delivery.ok.paid) return {};
  const { peerId } = delivery.candidate.offer;
  if (!isAudit(ctx) && !ctx.service.receiptSampler.shouldCheck(peerId)) return {};
  const outcome = await checkReceiptAfterAnswer(ctx, delivery, trailer);
  return outcome ? { receipt: outcome } : {};
}

/** Clock difference allowed between a seller's receipt time and the buyer's own clock. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** What came of an answer's receipt: `verified`, or why it was refused. */
export type ReceiptOutcome = 'verified' | ReceiptRefusal;

/**
 * Checks the receipt of a delivered answer whose trailer arrived, and does what follows from it.
 * Undefined when there is nothing to check: no trailer (a cut or abandoned answer, handled as
 * such), or a transport that carries no receipts.
 */
export function checkReceipt(
  ctx: ProxyContext,
  delivery: Delivery,
  trailer: SellerTrailer | undefined,
): ReceiptOutcome | undefined {
  const { candidate, ok } = delivery;
  const exchange = ok.response.exchange?.();
  const check = verifyAnswerReceipt(delivery, trailer);
  if (check === undefined || exchange === undefined) return undefined;
  const { offer } = candidate;
  const { sent } = ok;
  const { service } = ctx;
  const outcome: ReceiptOutcome = check.ok ? 'verified' : check.reason;
  service.metrics.receipts.inc({ peer_id: offer.peerId, outcome });
  if (!check.ok) {
    service.deps.logger.warn(
      { peerId: offer.peerId, requestId: ctx.request.id, reason: check.reason, err: check.message },
      'seller receipt refused; paying no more than the buyer-side count',
    );
    service.deps.reputation.penalise?.(offer.peerId);
    service.receiptSampler.suspect(offer.peerId);
    return outcome;
  }
  if (isAudit(ctx) && exchange.responseBody !== undefined) {
    service.evidence.keep(ctx.request.id, {
      receipt: check.receipt,
      request: { method: 'POST', path: sent.path, body: sent.body },
      response: { status: ok.response.status, body: exchange.responseBody },
      sellerProtocol: candidate.sellerProtocol,
      peerId: offer.peerId,
      serviceId: offer.serviceId,
    });
  }
  return outcome;
}

/**
 * The seller's receipt of a delivered answer checked against what the buyer sent and received
 * (no side effects); undefined when there is nothing to check.
 */
export function verifyAnswerReceipt(
  { candidate, ok }: Delivery,
  trailer: SellerTrailer | undefined,
): ReceiptCheck | undefined {
  const exchange = ok.response.exchange?.();
  if (trailer === undefined || exchange === undefined) return undefined;
  const { offer } = candidate;
  const { sent } = ok;
  return verifyReceipt(trailer.receipt, {
    seller: offer.peerId,
    buyer: exchange.buyerPeerId,
    ...(sent.multipart ? {} : { serviceId: offer.serviceId }),
    requestHash: exchange.requestHash,
    responseHash: exchange.responseHash,
    claims: trailer,
    timeMs: { from: sent.atMs - CLOCK_SKEW_MS, to: Date.now() + CLOCK_SKEW_MS },
  });
}
