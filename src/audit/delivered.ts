/** A delivered answer as the buyer tells the auditor of it (src/audit/auditor.ts `noteAnswer`). */
import type { MicroUsd } from '../money/index.js';
import type { AnswerEvidence, ApiProtocol } from '../network/index.js';
import type { ShapeInput } from './shape.js';

/**
 * The answer the client received, as the seller sent it, for an audit of real answers
 * (docs/decisions/221-audits-of-real-answers.md). Nothing is copied to make it: it points at
 * what the buyer already holds.
 */
export interface DeliveredBody {
  /** The protocol the seller answered in. */
  sellerProtocol: ApiProtocol;
  /** A whole answer's body, as the seller sent it. */
  body?: Uint8Array;
  /** A streamed answer: the data of its JSON events, in order, as the buyer scanned them. */
  events?: readonly string[];
  /** A whole answer's verified receipt with the exact bytes it covers. */
  evidence?: AnswerEvidence;
  /** A streamed answer's verified receipt (its bytes are not kept). */
  receipt?: Record<string, unknown>;
}

/** A delivered answer the auditor hears of. */
export interface DeliveredAnswer {
  peerId: string;
  modelKey: string;
  identity: string;
  costMicro: MicroUsd;
  /** When the request arrived (ms). */
  arrivedAt: number;
  /** How long before it arrived its request id was made, when not by the buyer (a gateway's). */
  idAgeMs?: number;
  /** The request, for its shape or a replay (called only when one is wanted, after the answer). */
  request?: () => ShapeInput;
  /**
   * The answer, for an audit of it, or why the request may not be sent to references: given
   * only while `buyer.audit.realAnswers` is on, called only for a request the auditor sampled.
   */
  answer?: () => DeliveredBody | string;
}
