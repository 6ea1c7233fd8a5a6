/**
 * Audits of real answers (docs/decisions/221-audits-of-real-answers.md): a request the buyer
 * already sent and the audited seller already answered is sent again, with the same format, path
 * and body bytes (per-request header ids written anew, as for probes), to the references only;
 * the audited seller's own answer, as the client received it, stands in its place. The seller
 * cannot tell an audited request from any other: it is an ordinary request, answered before
 * anyone decided to audit it. Requests the references cannot answer as the seller did (state
 * held elsewhere, no exact bytes, an answer the buyer cannot read), and those whose own routing
 * chose their sellers (the buyer says why), are not replayed: their samples stay probes.
 */
import { randomBytes } from 'node:crypto';
import type { Offer } from '../catalog/index.js';
import { formatOfProtocol } from '../formats/index.js';
import { formatUsd } from '../money/index.js';
import { answerText, looksLikeStream, streamedAnswerText } from './answerText.js';
import { keptEvidence } from './ask.js';
import type { DeliveredAnswer, DeliveredBody } from './delivered.js';
import type { RequestShape } from './shape.js';
import { comparableText } from './statistics.js';
import type { ProbeAnswer } from './verdict.js';

/** What every copy of an audit carries but its body: a probe's from its shape, a replay's as sent. */
type CopyHead = Pick<
  RequestShape,
  'format' | 'path' | 'headers' | 'maxCostUsd' | 'gapMs' | 'idAgeMs'
>;

/** An audit's copies: its id, what each carries but its body, and the body one seller receives. */
export interface Copies {
  id: string;
  head: CopyHead;
  bodyFor: (offer: Offer) => Uint8Array;
}

/** A real request to send again, and the audited seller's answer to it. */
export interface Replay {
  head: CopyHead;
  /** The body bytes the client sent. */
  body: Uint8Array;
  /** The audited seller's answer, recorded as a probe's answers are. */
  audited: ProbeAnswer;
}

/** Deepest JSON and most nodes looked at for state held elsewhere. */
const MAX_DEPTH = 32;
const MAX_NODES = 50_000;
/** Keys that point at state a reference does not hold (a vendor's stored response, file, container). */
const STATEFUL_KEYS = new Set([
  'previous_response_id',
  'conversation',
  'file_id',
  'container',
  'encrypted_content',
]);
/** Parts that point at state held elsewhere, or carry reasoning only its vendor can read. */
const STATEFUL_TYPES = new Set(['item_reference', 'container_upload', 'redacted_thinking']);

/** Why `body` cannot be answered by a reference as by its seller; undefined when it can. */
function statefulPart(body: unknown): string | undefined {
  let nodes = 0;
  const walk = (value: unknown, depth: number): string | undefined => {
    if (++nodes > MAX_NODES || depth > MAX_DEPTH) return 'too large to inspect';
    if (typeof value !== 'object' || value === null) return undefined;
    if (Array.isArray(value)) {
      for (const item of value) {
        const found = walk(item, depth + 1);
        if (found) return found;
      }
      return undefined;
    }
    const object = value as Record<string, unknown>;
    if (typeof object.type === 'string' && STATEFUL_TYPES.has(object.type)) return object.type;
    for (const [key, child] of Object.entries(object)) {
      if (STATEFUL_KEYS.has(key) && child !== null && child !== undefined) return key;
      const found = walk(child, depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  return walk(body, 0);
}

/** The text of a delivered answer, from the seller's bytes (as a bundle reads them). */
function textOf(delivered: DeliveredBody): string | undefined {
  const format = formatOfProtocol(delivered.sellerProtocol);
  if (!format) return undefined;
  if (delivered.body) {
    const body = Buffer.from(delivered.body).toString('utf8');
    return answerText(format, body, looksLikeStream(body)).text;
  }
  if (delivered.events) {
    return streamedAnswerText(
      format,
      delivered.events.map((data) => ({ data })),
    );
  }
  return undefined;
}

/**
 * The replay of a delivered answer to `serviceId`, or why there is none (the sample then becomes
 * a probe, as with the option off). Reads the request and the answer: call it only for a
 * sampled request.
 */
export function replayOf(answer: DeliveredAnswer, serviceId: string): Replay | string {
  if (!answer.request || !answer.answer) return 'no request or answer to replay';
  const request = answer.request();
  if (!request.rawBody) return 'the request bytes were not kept';
  const stateful = statefulPart(request.body);
  if (stateful) return `the request uses ${stateful}`;
  const delivered = answer.answer();
  if (typeof delivered === 'string') return delivered;
  const text = textOf(delivered);
  if (text === undefined) return 'the answer is not text';
  const kept = delivered.evidence
    ? keptEvidence(delivered.evidence)
    : delivered.receipt
      ? { receipt: delivered.receipt }
      : {};
  return {
    head: {
      format: request.format,
      path: request.path,
      headers: request.headers,
      ...(request.maxCostUsd !== undefined ? { maxCostUsd: request.maxCostUsd } : {}),
      ...(request.idAgeMs !== undefined ? { idAgeMs: request.idAgeMs } : {}),
    },
    body: request.rawBody,
    audited: {
      peerId: answer.peerId,
      serviceId,
      text: comparableText(text),
      costUsd: formatUsd(answer.costMicro),
      ...kept,
    },
  };
}

/** A replay's copies: the client's own bytes for every reference. */
export function replayCopies(replay: Replay): Copies {
  return {
    id: `replay_${randomBytes(8).toString('hex')}`,
    head: replay.head,
    bodyFor: () => replay.body,
  };
}
