/**
 * Forwarding one request to the buyer: reserve on every budget, send with the control headers,
 * stream the answer through untouched, then settle what the buyer says it cost (or, when it cannot
 * say, the whole reservation: spend is never under-counted).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ERROR_CODES, isErrorCode, SvcError } from '../../errors/index.js';
import { capMaxOutputTokens, formatOfPath } from '../../formats/index.js';
import { isJsonRequest, parseJsonObject, readBody, writeChunk } from '../../http/index.js';
import { formatUsd } from '../../money/index.js';
import {
  type BuyerCall,
  decodeSellerHeaders,
  encodeControlHeaders,
  headerValue,
  SVC_HEADER,
} from '../../protocol/index.js';
import { buyerPolicyWire, encodeBuyerPolicy } from '../policy/mergePolicies.js';
import type { RoutingPolicy } from '../policy/types.js';
import type { LogRow, Reservation } from '../store/types.js';
import { type Caller, storeCall } from './authenticate.js';
import {
  type CostReport,
  costFromHeaders,
  lookupCost,
  reportOf,
  SseUsageScanner,
  UNKNOWN_TO_BUYER,
} from './costReport.js';
import type { GatewayDeps } from './deps.js';
import { forwardHeaders, responseHeaders } from './forwardHeaders.js';
import { callInProcess } from './inProcessCall.js';
import { pinOf } from './pinHeader.js';
import { newLogId } from './requestLog.js';
import { reserveRequest } from './reserveRequest.js';
import { resolvePolicy } from './resolvePolicy.js';
import type { Route } from './routes.js';
import { type Billing, settle, settleRequest } from './settleRequest.js';

/** Answers up to this size are sent in one write with their headers. */
const SMALL_BODY_BYTES = 64 * 1024;

const NO_TOKENS = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };

interface ParsedBody {
  json: Record<string, unknown> | null;
  model: string | undefined;
}

function parseBody(req: IncomingMessage, body: Buffer): ParsedBody {
  const type = String(req.headers['content-type'] ?? '');
  if (!type.includes('json') && !(type === '' && body.length > 0))
    return { json: null, model: undefined };
  const record = parseJsonObject(body);
  return { json: record, model: typeof record.model === 'string' ? record.model : undefined };
}

/** Handles a proxied route; fills `log` as it goes. */
export async function proxyRequest(
  deps: GatewayDeps,
  caller: Caller,
  route: Route,
  req: IncomingMessage,
  res: ServerResponse,
  log: LogRow,
  startedMs: number,
): Promise<void> {
  const body = await readBody(req, deps.config.bodyLimitBytes);
  const parsed = parseBody(req, body);
  logCaller(req, parsed, log);
  const { policy, model } = await resolvePolicy(deps.store, caller, parsed.model);
  const pin = pinOf(req.headers, policy, model);
  // Time-ordered (as log ids): the reservation and journal key indexes grow at their ends.
  const requestId = `req_${newLogId(Date.now())}`;
  log.requestId = requestId;
  const reserved = route.billed
    ? await reserveRequest(
        deps,
        caller,
        req,
        { json: parsed.json, model, policy, pinnedPeer: pin?.peerId },
        requestId,
      )
    : null;
  const reservation = reserved?.reservation ?? null;
  const sent = withMaxOutput(withModel(body, parsed, model), req, reserved?.maxOutputTokens);
  const billing: Billing = { deps, reservation, requestId, log };
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (deps.inProcess?.serves(path) && sent.json && isJsonRequest(req)) {
    const call: BuyerCall = {
      path,
      headers: forwardHeaders(req.headers, {}),
      body: sent.json,
      rawBody: sent.bytes,
      requestId,
      identity: caller.workspace.identity,
      ...(Object.keys(policy).length > 0 ? { policy: buyerPolicyWire(policy) } : {}),
      ...(reservation?.limited ? { maxCostMicro: reservation.amountMicro } : {}),
      ...(pin ? { pin: pin.header } : {}),
    };
    await callInProcess(billing, deps.inProcess, call, res, { startedMs, model });
    return;
  }
  const control = controlHeaders(deps, caller, policy, requestId, reservation);
  if (pin) control[SVC_HEADER.pinPeer] = pin.header;
  const upstream = await sendToBuyer(deps, req, res, control, sent.bytes, reservation);
  const streamed = logAnswerHead(log, upstream, startedMs, model);
  const report = await costBeforeAnswering(billing, upstream, streamed);
  const relayed = await relayAnswer(billing, res, upstream, streamed, report);
  if (relayed === 'settled') return;
  logAnswerEnd(log, res, upstream, relayed);
  await settleRequest(billing, report ?? relayed.scanner?.report ?? null);
}

/** How a relayed answer ended, when it was streamed rather than sent in one write. */
interface RelayEnd {
  buyerBroke: boolean;
  scanner: SseUsageScanner | null;
}

function logCaller(req: IncomingMessage, parsed: ParsedBody, log: LogRow): void {
  const endUser = parsed.json?.user ?? headerValue(req.headers, SVC_HEADER.endUser);
  log.endUser = typeof endUser === 'string' ? endUser.slice(0, 256) : null;
  log.requestedModel = parsed.model ?? null;
}

/** The body to send on, as an object (null when not JSON) and as bytes. */
interface Outgoing {
  json: Record<string, unknown> | null;
  bytes: Buffer;
}

/** The body to forward: rewritten only when the policy changed the model. */
function withModel(body: Buffer, parsed: ParsedBody, model: string | undefined): Outgoing {
  if (parsed.json && model !== parsed.model) {
    const json = { ...parsed.json, model };
    return { json, bytes: Buffer.from(JSON.stringify(json)) };
  }
  return { json: parsed.json, bytes: body };
}

/**
 * The body with its max tokens lowered to what the budget's room pays for, when the reservation
 * said so (docs/decisions/170-max-tokens-under-a-cost-cap.md); else `out` as it is.
 */
function withMaxOutput(
  out: Outgoing,
  req: IncomingMessage,
  maxOutputTokens: number | undefined,
): Outgoing {
  const format = formatOfPath((req.url ?? '/').split('?')[0] ?? '/');
  if (maxOutputTokens === undefined || !out.json || !format) return out;
  const json = capMaxOutputTokens(format, out.json, maxOutputTokens);
  return { json, bytes: Buffer.from(JSON.stringify(json)) };
}

function controlHeaders(
  deps: GatewayDeps,
  caller: Caller,
  policy: RoutingPolicy,
  requestId: string,
  reservation: Reservation | null,
): Record<string, string> {
  return encodeControlHeaders({
    buyerIdentity: caller.workspace.identity,
    gatewayAuth: deps.controlSecret,
    requestId,
    ...(Object.keys(policy).length > 0 ? { routingPolicy: encodeBuyerPolicy(policy) } : {}),
    ...(reservation?.limited ? { maxCostUsd: formatUsd(reservation.amountMicro) } : {}),
  });
}

/**
 * Sends the request to the buyer, aborted when the client goes away; a failure releases the
 * reservation and is `request_cancelled` or `buyer_unavailable`.
 */
async function sendToBuyer(
  deps: GatewayDeps,
  req: IncomingMessage,
  res: ServerResponse,
  control: Record<string, string>,
  forwardBody: Buffer,
  reservation: Reservation | null,
): Promise<Dispatcher.ResponseData> {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  try {
    return await deps.buyer.request({
      method: 'POST',
      path: req.url ?? '/',
      headers: forwardHeaders(req.headers, control),
      body: forwardBody,
      signal: abort.signal,
    });
  } catch (error) {
    if (reservation) await storeCall(() => deps.store.release(reservation.id));
    if (abort.signal.aborted) throw new SvcError('request_cancelled', { cause: error });
    throw new SvcError('buyer_unavailable', { cause: error });
  }
}

/** Logs the answer's head and who served it; true when the answer is an event stream. */
function logAnswerHead(
  log: LogRow,
  upstream: Dispatcher.ResponseData,
  startedMs: number,
  model: string | undefined,
): boolean {
  log.ttfbMs = Math.round(performance.now() - startedMs);
  log.status = upstream.statusCode;
  const seller = decodeSellerHeaders(upstream.headers);
  log.peerId = seller.peerId ?? null;
  log.provider = seller.provider ?? null;
  log.serviceId = seller.service ?? null;
  log.servedModel = log.serviceId ?? model ?? null;
  const streamed = String(upstream.headers['content-type'] ?? '').includes('text/event-stream');
  log.streamed = streamed;
  return streamed;
}

/**
 * The cost known before answering. A limited key whose spend cannot be determined is settled and
 * refused with `spend_tracking_unavailable`.
 */
async function costBeforeAnswering(
  billing: Billing,
  upstream: Dispatcher.ResponseData,
  streamed: boolean,
): Promise<CostReport | null> {
  const { deps, reservation, requestId, log } = billing;
  let report: CostReport | null = streamed ? null : costFromHeaders(upstream.headers);
  if (!streamed && !report && reservation && upstream.statusCode >= 400) {
    // An error without a cost: a request the buyer never routed cost nothing.
    const looked = await lookupCost(deps.buyer, requestId, { attempts: 3 });
    report = looked === UNKNOWN_TO_BUYER ? { costMicro: 0n, usage: NO_TOKENS } : looked;
  } else if (!streamed && !report && reservation?.limited) {
    // Fail closed: a limited key is never answered when its spend cannot be determined.
    report = reportOf(await lookupCost(deps.buyer, requestId));
    if (!report) {
      await upstream.body.dump();
      await settle(deps, reservation, requestId, null, log);
      throw new SvcError('spend_tracking_unavailable', { details: { request_id: requestId } });
    }
  }
  return report;
}

/**
 * Sends the answer to the client: a small complete one in one write, then settled ('settled');
 * else streamed through, returning how the stream ended.
 */
async function relayAnswer(
  billing: Billing,
  res: ServerResponse,
  upstream: Dispatcher.ResponseData,
  streamed: boolean,
  report: CostReport | null,
): Promise<RelayEnd | 'settled'> {
  const { log } = billing;
  res.writeHead(upstream.statusCode, responseHeaders(upstream.headers));
  const scanner = streamed ? new SseUsageScanner() : null;
  try {
    const declaredLength = Number(upstream.headers['content-length'] ?? Number.NaN);
    if (!streamed && declaredLength <= SMALL_BODY_BYTES) {
      // A small complete answer goes out with its headers in one write (no stream to keep open).
      const body = Buffer.from(await upstream.body.arrayBuffer());
      if (upstream.statusCode >= 400) log.errorCode = errorCodeOf(body);
      res.end(body);
      await settleRequest(billing, report);
      return 'settled';
    }
    const errorBody: Buffer[] | null = upstream.statusCode >= 400 && !streamed ? [] : null;
    for await (const chunk of upstream.body) {
      scanner?.push(chunk as Buffer);
      if (errorBody && errorBody.length < 16) errorBody.push(chunk as Buffer);
      if (!(await writeChunk(res, chunk as Buffer))) break;
    }
    if (!res.destroyed) res.end();
    if (errorBody) log.errorCode = errorCodeOf(Buffer.concat(errorBody));
  } catch {
    // The client went away, or the buyer cut the stream: settle what was delivered.
    if (!res.destroyed && !res.writableEnded) {
      // Mid-answer there is no way to send an error: close the connection so the client sees it.
      res.destroy();
      return { buyerBroke: true, scanner };
    }
  }
  return { buyerBroke: false, scanner };
}

/** Logs how a streamed answer ended: the buyer broke, the seller failed, or the client left. */
function logAnswerEnd(
  log: LogRow,
  res: ServerResponse,
  upstream: Dispatcher.ResponseData,
  relayed: RelayEnd,
): void {
  const streamFailure = relayed.scanner?.report?.errorCode;
  if (relayed.buyerBroke) {
    log.status = 502;
    log.errorCode = 'buyer_unavailable';
  } else if (streamFailure) {
    // The seller failed after the first byte: the client got its format's error event.
    log.status = isErrorCode(streamFailure) ? ERROR_CODES[streamFailure].status : 502;
    log.errorCode = streamFailure;
  } else if (res.destroyed && !res.writableFinished) {
    log.status = 499;
    log.errorCode = 'request_cancelled';
    upstream.body.destroy();
  }
}

/** The `code` of an OpenAI- or Anthropic-style error body, for the log. */
function errorCodeOf(body: Buffer): string | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as {
      error?: { code?: unknown; type?: unknown };
    };
    const code = parsed.error?.code ?? parsed.error?.type;
    return typeof code === 'string' ? code.slice(0, 64) : null;
  } catch {
    return null;
  }
}
