/**
 * A proxied request as one value built when it arrives (docs/decisions/189-buyer-request-and-
 * delivery-values.md), and the context serving it: the buyer, the response, the tries.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AUDIT_HEADER, auditIdAgeOf } from '../audit/index.js';
import type { ErrorStyle } from '../errors/index.js';
import type { MicroUsd, TokenUsage } from '../money/index.js';
import type { ApiProtocol } from '../network/index.js';
import { headerValue, newRequestId, requestIdAge, SVC_HEADER } from '../protocol/index.js';
import type { PreferenceNarrowing } from '../routing/index.js';
import type { BuyerService } from './BuyerService.js';
import { type GatewayAccess, gatewayAccessOf, gatewayLimitsOf } from './gatewayAuth.js';
import type { RequestRecord } from './requestRecords.js';

export interface ProxyRoute {
  /** Metrics label, e.g. `chat_completions`. */
  name: string;
  protocol: ApiProtocol;
  style: ErrorStyle;
}

/** What the buyer reads of a request besides its body: its headers and path. */
export type RequestHead = Pick<IncomingMessage, 'headers' | 'url'>;

/**
 * Where and for how much a request may be routed: the gateway's policy and cost cap (honoured only
 * from an authenticated gateway) and a pin (a client's header, or the gateway's checked one).
 */
export interface RequestLimits {
  readonly policy?: PreferenceNarrowing;
  /** Most the request may cost (the gateway's reservation for a limited key). */
  readonly maxCostMicro?: MicroUsd;
  /** `x-svc-pin-peer`: `<peer>` or `<peer>@<service>` (docs/decisions/180-gateway-runs-its-buyer.md). */
  readonly pin?: string;
}

/** The body of a request, as it came and as parsed. */
export interface RequestBody {
  readonly body: Readonly<Record<string, unknown>>;
  readonly bodyBytes: number;
  /** The client's body as it came: relayed as is when nothing in `body` changes. */
  readonly rawBody?: Buffer;
}

/**
 * One proxied request, built when it arrives and never changed after
 * (docs/decisions/189-buyer-request-and-delivery-values.md): who sent it, its body, its limits.
 * Before its body is read it has an empty one; reading it makes a new value.
 */
export interface BuyerRequest extends RequestBody {
  /** The gateway's request id when it sent one; the buyer's own otherwise. */
  readonly id: string;
  /**
   * How long before `startedAt` the gateway made `id` (ms), by the time it holds: an audit copying
   * the request gets an id as old (docs/decisions/223-key-order-and-id-time.md).
   */
  readonly idAgeMs?: number;
  /** The client's request; for a gateway's in-process call, the headers it forwards. */
  readonly head: RequestHead;
  readonly route: ProxyRoute;
  readonly startedAt: number;
  readonly access: GatewayAccess;
  readonly limits: RequestLimits;
}

/** What serving one request holds besides the request: the buyer, the response, the tries. */
export interface ProxyContext {
  readonly service: BuyerService;
  readonly request: BuyerRequest;
  readonly res: ServerResponse;
  /** Aborted when the client goes away. */
  readonly clientAbort: AbortController;
  /** One entry per failed try, appended as they happen (`x-svc-attempts`). */
  readonly attempts: string[];
  /** Told the request's record once it is written (a gateway's in-process call settles on it). */
  readonly onFinish?: (record: RequestRecord) => void;
}

/** Who sent an in-process call, as the gateway hands it over, and who is told its record. */
export interface GivenAccess {
  access: GatewayAccess;
  requestId: string;
  onFinish: (record: RequestRecord) => void;
}

/** A body read, with the limits that came with it (an in-process call's) or none (over HTTP). */
export interface LoadedBody extends RequestBody {
  readonly limits?: RequestLimits;
}

/**
 * The context of a request on a proxied route (text or media) as it arrives, before its body is
 * read: caller, request id (the gateway's when it sent one) and an abort signal for a client that
 * goes away.
 */
export function openProxyContext(
  service: BuyerService,
  head: RequestHead,
  res: ServerResponse,
  route: ProxyRoute,
  given?: GivenAccess,
): ProxyContext {
  const startedAt = service.deps.clock();
  // A gateway in the same process says who pays; over HTTP its control headers do.
  const { access, requestId } = given ?? gatewayAccessOf(service.controlSecret, head.headers);
  const clientAbort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) clientAbort.abort(new Error('client closed the connection'));
  });
  const request: BuyerRequest = {
    ...idOf(service, head, startedAt, requestId),
    head,
    route,
    startedAt,
    access,
    limits: NO_LIMITS,
    body: {},
    bodyBytes: 0,
  };
  return {
    service,
    request,
    res,
    clientAbort,
    attempts: [],
    ...(given ? { onFinish: given.onFinish } : {}),
  };
}

const NO_LIMITS: RequestLimits = {};

/**
 * A request's id: the gateway's, with how long before arrival it was made; else the buyer's, made
 * at arrival, or for an audit as long before it as the request it copies had its id made
 * (docs/decisions/223-key-order-and-id-time.md). Made here, not by the auditor before sending:
 * the hop to the proxy would add its own time.
 */
function idOf(
  service: BuyerService,
  head: RequestHead,
  startedAt: number,
  given: string | undefined,
): { id: string; idAgeMs?: number } {
  if (given !== undefined) {
    const idAgeMs = requestIdAge(given, startedAt);
    return idAgeMs === undefined ? { id: given } : { id: given, idAgeMs };
  }
  const age = auditIdAgeOf(head.headers, service.audits.marker);
  return { id: age === undefined ? newRequestId() : newRequestId(startedAt - age) };
}

/** The context with the request's body in (a new request value: the old one is not changed). */
export function withBody(ctx: ProxyContext, body: LoadedBody): ProxyContext {
  return { ...ctx, request: { ...ctx.request, ...body } };
}

/**
 * The context with the gateway's policy, cost cap and pin read from its headers (read once the
 * body is in, so a request refused for a bad header is recorded with its model).
 */
export function withHeaderLimits(ctx: ProxyContext): ProxyContext {
  const { access, head } = ctx.request;
  const { policy, maxCostMicro } = gatewayLimitsOf(access, head.headers);
  const pin = headerValue(head.headers, SVC_HEADER.pinPeer);
  if (!policy && maxCostMicro === undefined && !pin) return ctx;
  const limits: RequestLimits = {
    ...(policy ? { policy } : {}),
    ...(maxCostMicro !== undefined ? { maxCostMicro } : {}),
    ...(pin ? { pin } : {}),
  };
  return { ...ctx, request: { ...ctx.request, limits } };
}

export const ZERO_USAGE: TokenUsage = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };

/** True for the auditor's own requests: they carry its marker header (src/audit/ask.ts). */
export function isAudit(ctx: ProxyContext): boolean {
  return ctx.request.head.headers[AUDIT_HEADER] === ctx.service.audits.marker;
}
