/**
 * The values of one answered attempt (docs/decisions/189-buyer-request-and-delivery-values.md):
 * the delivery, built once when a seller's answer head arrives, and what the buyer counted of the
 * answer once it is over. Both are read, never changed.
 */
import type { TokenUsage } from '../money/index.js';
import type { SellerTrailer } from '../network/index.js';
import type { RouteCandidate } from '../routing/index.js';
import type { AttemptOk } from './attempt.js';
import type { RequestRecord } from './requestRecords.js';

/** One seller's answer being delivered: who, at what price, what the transport returned, when. */
export interface Delivery {
  /** The seller's offer (peer, service, price) and the protocol it speaks. */
  readonly candidate: RouteCandidate;
  /** The transport's result: the answer, its payment, the price and cap it was sent under. */
  readonly ok: AttemptOk;
  /** When it was sent for and when its head arrived (the buyer's clock; speed averages). */
  readonly sentAt: number;
  readonly headAt: number;
}

/** The record fields delivery knows; commitCost adds id, attempts, latency and the cost. */
export type RecordDraft = Omit<RequestRecord, 'requestId' | 'latencyMs' | 'attempts' | 'costUsd'>;

/** What the buyer counted of a delivered answer: what commitCost pays on. */
export interface CountedUsage {
  /** The usage billed (the seller's claim when accepted, else the buyer's count). */
  readonly usage: TokenUsage;
  /** The seller's trailer, when it sent one. */
  readonly claimed: SellerTrailer | undefined;
  /** The buyer's own count, computed only when payments ask for it. */
  readonly estimate: () => Promise<TokenUsage>;
  readonly draft: RecordDraft;
  /** A failed answer (docs/decisions/152-nothing-paid-for-failed-answers.md): paid nothing. */
  readonly failed?: boolean;
  /** Unit-billed (images, video): the seller's unit count must match the buyer's exactly. */
  readonly unitBilled?: boolean;
}
