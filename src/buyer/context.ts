/** Per-request context of a proxied request, and the record/metrics written when it finishes. */
import { randomFillSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AUDIT_HEADER, type ShapeInput } from '../audit/index.js';
import type { ErrorStyle } from '../errors/index.js';
import { type ApiFormat, formatOfProtocol } from '../formats/index.js';
import type { PeerId } from '../identity/index.js';
import { logRequestLine } from '../log/index.js';
import { type MicroUsd, parseUsd, type TokenUsage } from '../money/index.js';
import type { ApiProtocol } from '../network/index.js';
import { SVC_HEADER, timeHex } from '../protocol/index.js';
import type { PreferenceNarrowing } from '../routing/index.js';
import type { BuyerService } from './BuyerService.js';
import { type GatewayAccess, gatewayAccessOf, gatewayLimitsOf } from './gatewayAuth.js';
import { headersForSeller } from './http.js';
import type { RequestRecord } from './requestRecords.js';

export interface ProxyRoute {
  /** Metrics label, e.g. `chat_completions`. */
  name: string;
  protocol: ApiProtocol;
  style: ErrorStyle;
}

/** What the buyer reads of a request besides its body: its headers and path. */
export type RequestHead = Pick<IncomingMessage, 'headers' | 'url'>;

export interface ProxyContext {
  service: BuyerService;
  /** The client's request; for a gateway's in-process call, the headers it forwards. */
  req: RequestHead;
  res: ServerResponse;
  route: ProxyRoute;
  requestId: string;
  startedAt: number;
  body: Record<string, unknown>;
  bodyBytes: number;
  /** The client's body as it came: relayed as is when nothing in `body` changes. */
  rawBody?: Buffer;
  access: GatewayAccess;
  policy?: PreferenceNarrowing;
  maxCostMicro?: MicroUsd;
  /** Aborted when the client goes away. */
  clientAbort: AbortController;
  attempts: string[];
  /** When the answer being delivered was sent for and its head arrived (speed measurement). */
  answerTiming?: { peerId: PeerId; modelKey: string; sentAt: number; headAt: number };
  /** Told the request's record once it is written (a gateway's in-process call settles on it). */
  onFinish?: (record: RequestRecord) => void;
}

const RANDOM_BYTES = 6;
/** Random bytes for request ids, filled 256 ids at a time: one system call instead of one each. */
const idPool = Buffer.alloc(RANDOM_BYTES * 256);
let idOffset = idPool.length;

/**
 * `req_` and 24 hex digits: 12 of unix milliseconds, then 12 random. The journal's key index
 * then grows at its end, as requests arrive, instead of taking each record at a random page.
 */
export function newRequestId(now = Date.now()): string {
  if (idOffset === idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  const id = `${timeHex(now)}${idPool.toString('hex', idOffset, idOffset + RANDOM_BYTES)}`;
  idOffset += RANDOM_BYTES;
  return `req_${id}`;
}

/**
 * The context of a request on a proxied route (text or media): caller, request id (the gateway's
 * when it sent one) and an abort signal for a client that goes away.
 */
export function openProxyContext(
  service: BuyerService,
  req: RequestHead,
  res: ServerResponse,
  route: ProxyRoute,
  given?: { access: GatewayAccess; requestId: string },
): ProxyContext {
  const startedAt = service.deps.clock();
  // A gateway in the same process says who pays; over HTTP its control headers do.
  const { access, requestId } = given ?? gatewayAccessOf(service.controlSecret, req.headers);
  const clientAbort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) clientAbort.abort(new Error('client closed the connection'));
  });
  return {
    service,
    req,
    res,
    route,
    requestId: requestId ?? newRequestId(),
    startedAt,
    body: {},
    bodyBytes: 0,
    access,
    clientAbort,
    attempts: [],
  };
}

/** Applies the gateway's policy and cost cap (read once the body is in). */
export function applyGatewayLimits(ctx: ProxyContext): void {
  const { policy, maxCostMicro } = gatewayLimitsOf(ctx.access, ctx.req.headers);
  if (policy) ctx.policy = policy;
  if (maxCostMicro !== undefined) ctx.maxCostMicro = maxCostMicro;
}

export const ZERO_USAGE: TokenUsage = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };

/**
 * Feeds the speed averages routing sorts by (docs/decisions/150-routing-by-speed.md): time to the
 * answer's head (a stream's first event) and output tokens over the whole answer. Only completed
 * answers count. Runs as the answer ends, so the next request already sees it.
 */
function recordSpeed(ctx: ProxyContext, completed: boolean, outputTokens: number): void {
  const timing = ctx.answerTiming;
  if (!timing || !completed) return;
  ctx.answerTiming = undefined;
  ctx.service.speed.record(timing.peerId, timing.modelKey, {
    ttftMs: timing.headAt - timing.sentAt,
    totalMs: ctx.service.deps.clock() - timing.sentAt,
    outputTokens,
  });
}

/** True for the auditor's own requests: they carry its marker header (src/audit/ask.ts). */
export function isAudit(ctx: ProxyContext): boolean {
  return ctx.req.headers[AUDIT_HEADER] === ctx.service.audits.marker;
}

/**
 * Tells the auditor about a delivered answer (docs/guide/trust.md): its cost counts toward
 * the identity's own spend, its pace and (sometimes) its shape join the traffic profile audits
 * copy, and the seller may be probed later, off this request. The auditor's own requests carry
 * its marker and are neither counted, shaped nor audited.
 */
function noteForAudits(
  ctx: ProxyContext,
  record: Omit<RequestRecord, 'requestId' | 'latencyMs' | 'attempts'>,
): void {
  const { audits } = ctx.service;
  if (isAudit(ctx)) return;
  const timing = ctx.answerTiming;
  if (!timing || !record.completed || record.peerId === null) return;
  let cost = 0n;
  try {
    cost = parseUsd(record.costUsd);
  } catch {
    // A cost that is not a plain amount counts as nothing toward the audit share.
  }
  const format = formatOfProtocol(ctx.route.protocol);
  audits.noteAnswer({
    peerId: timing.peerId,
    modelKey: timing.modelKey,
    identity: ctx.access.identity,
    costMicro: cost,
    arrivedAt: ctx.startedAt,
    ...(format ? { request: () => shapeInputOf(ctx, format) } : {}),
  });
}

/** What the auditor needs to shape a request: as the seller saw it, without svc's headers. */
function shapeInputOf(ctx: ProxyContext, format: ApiFormat): ShapeInput {
  const maxCost = ctx.req.headers[SVC_HEADER.maxCostUsd];
  return {
    format,
    path: ctx.req.url ?? '/',
    body: ctx.body,
    ...(ctx.rawBody ? { rawHead: ctx.rawBody.subarray(0, 64) } : {}),
    headers: Object.entries(headersForSeller(ctx.req)),
    identity: ctx.access.identity,
    ...(typeof maxCost === 'string' && ctx.access.authenticated ? { maxCostUsd: maxCost } : {}),
  };
}

/**
 * Stores the request record and updates metrics. The record is journaled soon, not at once: a
 * voucher's record was journaled before it was signed (src/buyer/commitCost.ts), and one with a
 * stream's progress is replaced at once (docs/decisions/157-buyer-cpu-per-request.md).
 */
export function finishRequest(
  ctx: ProxyContext,
  record: Omit<RequestRecord, 'requestId' | 'latencyMs' | 'attempts'>,
): void {
  const latencyMs = ctx.service.deps.clock() - ctx.startedAt;
  const full: RequestRecord = {
    ...record,
    requestId: ctx.requestId,
    latencyMs,
    attempts: [...ctx.attempts],
  };
  const { metrics, records } = ctx.service;
  records.putSoon(full);
  noteForAudits(ctx, record);
  recordSpeed(ctx, record.completed, record.usage.outputTokens);
  logRequestLine(ctx.service.deps.logger, {
    requestId: ctx.requestId,
    route: ctx.req.url ?? '',
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
  metrics.requests.inc({ route: ctx.route.name, status: String(record.status) });
  if (record.errorCode) metrics.errors.inc({ code: record.errorCode });
  metrics.latency.observe(
    { route: ctx.route.name, streamed: String(record.streamed) },
    latencyMs / 1000,
  );
  metrics.tokens.inc({ kind: 'input' }, record.usage.inputTokens);
  metrics.tokens.inc({ kind: 'cached_input' }, record.usage.cachedInputTokens);
  metrics.tokens.inc({ kind: 'output' }, record.usage.outputTokens);
  ctx.onFinish?.(full);
}
