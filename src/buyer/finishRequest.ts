/**
 * The end of a proxied request: its record, the one-line request log, metrics, and for a
 * completed answer the speed averages and the auditor's note.
 */

import type { ShapeInput } from '../audit/index.js';
import type { ApiFormat } from '../formats/index.js';
import { formatOfProtocol } from '../formats/index.js';
import { logRequestLine } from '../log/index.js';
import { parseUsd } from '../money/index.js';
import { SVC_HEADER } from '../protocol/index.js';
import { deliveredBodyOf, keptToItsSellers, type SeenAnswer } from './auditedAnswer.js';
import { type BuyerRequest, isAudit, type ProxyContext } from './context.js';
import type { Delivery } from './delivery.js';
import { headersForSeller } from './http.js';
import type { RequestRecord } from './requestRecords.js';

/** A request's record without what finishing adds (id, latency, attempts). */
export type FinishedRecord = Omit<RequestRecord, 'requestId' | 'latencyMs' | 'attempts'>;

/**
 * Feeds the speed averages routing sorts by (docs/decisions/150-routing-by-speed.md): time to the
 * answer's head (a stream's first event) and output tokens over the whole answer. Only completed
 * answers count. Runs as the answer ends, so the next request already sees it.
 */
function recordSpeed(ctx: ProxyContext, delivery: Delivery, outputTokens: number): void {
  const { peerId, modelKey } = delivery.candidate.offer;
  ctx.service.speed.record(peerId, modelKey, {
    ttftMs: delivery.headAt - delivery.sentAt,
    totalMs: ctx.service.deps.clock() - delivery.sentAt,
    outputTokens,
  });
}

/**
 * Tells the auditor about a delivered answer (docs/guide/trust.md): its cost counts toward
 * the identity's own spend, its pace and (sometimes) its shape join the traffic profile audits
 * copy, and the seller may be probed later, off this request. The auditor's own requests carry
 * its marker and are neither counted, shaped nor audited. With audits of real answers on, the
 * answer too is offered, read only if the auditor samples it
 * (docs/decisions/221-audits-of-real-answers.md).
 */
function noteForAudits(
  ctx: ProxyContext,
  record: FinishedRecord,
  delivery: Delivery,
  seen: SeenAnswer | undefined,
): void {
  const { audits } = ctx.service;
  if (isAudit(ctx) || record.peerId === null) return;
  const { request } = ctx;
  let cost = 0n;
  try {
    cost = parseUsd(record.costUsd);
  } catch {
    // A cost that is not a plain amount counts as nothing toward the audit share.
  }
  const format = formatOfProtocol(request.route.protocol);
  const { peerId, modelKey } = delivery.candidate.offer;
  audits.noteAnswer({
    peerId,
    modelKey,
    identity: request.access.identity,
    costMicro: cost,
    arrivedAt: request.startedAt,
    ...(request.idAgeMs !== undefined ? { idAgeMs: request.idAgeMs } : {}),
    ...(format ? { request: () => shapeInputOf(request, format) } : {}),
    ...(seen && format
      ? { answer: () => keptToItsSellers(ctx) ?? deliveredBodyOf(delivery, seen) }
      : {}),
  });
}

/** What the auditor needs to shape a request: as the seller saw it, without svc's headers. */
function shapeInputOf(request: BuyerRequest, format: ApiFormat): ShapeInput {
  const maxCost = request.head.headers[SVC_HEADER.maxCostUsd];
  return {
    format,
    path: request.head.url ?? '/',
    body: request.body,
    ...(request.rawBody ? { rawBody: request.rawBody } : {}),
    headers: Object.entries(headersForSeller(request.head)),
    identity: request.access.identity,
    ...(typeof maxCost === 'string' && request.access.authenticated ? { maxCostUsd: maxCost } : {}),
    ...(request.idAgeMs !== undefined ? { idAgeMs: request.idAgeMs } : {}),
  };
}

/**
 * Stores the request record and updates metrics. The record is journaled soon, not at once: a
 * voucher's record was journaled before it was signed (src/buyer/commitCost.ts), and one with a
 * stream's progress is replaced at once (docs/decisions/157-buyer-cpu-per-request.md).
 */
export function finishRequest(
  ctx: ProxyContext,
  record: FinishedRecord,
  /** The answer delivered, if any: a completed one feeds the speed averages and the auditor. */
  delivery?: Delivery,
  /** What the buyer saw of a text answer, given only while audits of real answers are on. */
  seen?: SeenAnswer,
): void {
  const { request } = ctx;
  const latencyMs = ctx.service.deps.clock() - request.startedAt;
  const full: RequestRecord = {
    ...record,
    requestId: request.id,
    latencyMs,
    attempts: [...ctx.attempts],
  };
  const { metrics, records } = ctx.service;
  records.putSoon(full);
  if (delivery && record.completed) {
    noteForAudits(ctx, record, delivery, seen);
    recordSpeed(ctx, delivery, record.usage.outputTokens);
  }
  logRequestLine(ctx.service.deps.logger, {
    requestId: request.id,
    route: request.head.url ?? '',
    model: record.serviceId ?? record.model,
    peer: record.peerId,
    status: record.status,
    inputTokens: record.usage.inputTokens,
    cachedInputTokens: record.usage.cachedInputTokens,
    outputTokens: record.usage.outputTokens,
    costUsd: record.costUsd,
    ms: Math.round(latencyMs),
    errorCode: record.errorCode ?? null,
  });
  metrics.requests.inc({ route: request.route.name, status: String(record.status) });
  if (record.errorCode) metrics.errors.inc({ code: record.errorCode });
  metrics.latency.observe(
    { route: request.route.name, streamed: String(record.streamed) },
    latencyMs / 1000,
  );
  metrics.tokens.inc({ kind: 'input' }, record.usage.inputTokens);
  metrics.tokens.inc({ kind: 'cached_input' }, record.usage.cachedInputTokens);
  metrics.tokens.inc({ kind: 'output' }, record.usage.outputTokens);
  ctx.onFinish?.(full);
}
