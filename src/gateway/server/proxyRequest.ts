/**
 * Forwarding one request to the buyer: reserve on every budget, send with the control headers,
 * stream the answer through untouched, then settle what the buyer says it cost (or, when it cannot
 * say, the whole reservation: spend is never under-counted).
 */
import type { IncomingMessage } from 'node:http';
import type { Dispatcher } from 'undici';
import { SvcError } from '../../errors/index.js';
import { capMaxOutputTokens, formatOfPath } from '../../formats/index.js';
import { isJsonRequest, parseJsonObject, readBody } from '../../http/index.js';
import { formatUsd } from '../../money/index.js';
import {
  type BuyerCall,
  decodeSellerHeaders,
  encodeControlHeaders,
  headerValue,
  newRequestId,
  SVC_HEADER,
} from '../../protocol/index.js';
import { buyerPolicyWire, encodeBuyerPolicy } from '../policy/mergePolicies.js';
import type { RoutingPolicy } from '../policy/types.js';
import type { Reservation } from '../store/types.js';
import { type Caller, storeCall } from './authenticate.js';
import {
  type CostReport,
  costFromHeaders,
  lookupCost,
  reportOf,
  UNKNOWN_TO_BUYER,
} from './costReport.js';
import type { GatewayDeps } from './deps.js';
import { forwardHeaders } from './forwardHeaders.js';
import type { Incoming } from './incoming.js';
import { callInProcess } from './inProcessCall.js';
import { pinOf } from './pinHeader.js';
import { answerEndFacts, relayAnswer } from './relayAnswer.js';
import { FailedStep, failureFacts, type LogFacts } from './requestLog.js';
import { reserveRequest } from './reserveRequest.js';
import { resolvePolicy } from './resolvePolicy.js';
import type { Route } from './routes.js';
import { afterSettling, type Billing, settle, settleRequest } from './settleRequest.js';

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

/**
 * Handles a proxied route; what its log row shows. A failure carries the facts known when it
 * failed (docs/decisions/188-gateway-steps-return-facts.md).
 */
export async function proxyRequest(
  deps: GatewayDeps,
  incoming: Incoming,
  route: Route,
): Promise<LogFacts> {
  // The facts known so far: what a failure carries, whichever step throws.
  let facts: LogFacts = {};
  const learned = (more: LogFacts): LogFacts => {
    facts = { ...facts, ...more };
    return facts;
  };
  try {
    return await forward(deps, incoming, route, learned);
  } catch (error) {
    const failed = failureFacts(error);
    throw new FailedStep(failed.cause, { ...facts, ...failed.facts });
  }
}

/** Forwards one request; each fact goes to `learned` as soon as it is known. */
async function forward(
  deps: GatewayDeps,
  { caller, req, res, startedMs }: Incoming,
  route: Route,
  learned: (facts: LogFacts) => LogFacts,
): Promise<LogFacts> {
  const body = await readBody(req, deps.config.bodyLimitBytes);
  const parsed = parseBody(req, body);
  learned(callerFacts(req, parsed));
  const { policy, model } = await resolvePolicy(deps.store, caller, parsed.model);
  const pin = pinOf(req.headers, policy, model);
  // Time-ordered: the reservation and journal key indexes grow at their ends. The buyer's form,
  // which its audits of this key's traffic carry too (docs/decisions/218-probe-tells-closed.md).
  const requestId = newRequestId();
  learned({ requestId });
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
  const billing: Billing = { deps, reservation, requestId };
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
    return learned(await callInProcess(billing, deps.inProcess, call, res, { startedMs, model }));
  }
  const control = controlHeaders(deps, caller, policy, requestId, reservation);
  if (pin) control[SVC_HEADER.pinPeer] = pin.header;
  const upstream = await sendToBuyer(deps, { req, res }, control, sent.bytes, reservation);
  const head = learned(answerHeadFacts(upstream, startedMs, model));
  const streamed = head.streamed === true;
  const report = await costBeforeAnswering(billing, upstream, streamed);
  const relayed = await relayAnswer(billing, res, upstream, streamed, report);
  if ('settled' in relayed) return learned(relayed.settled);
  const ended = learned({ ...relayed.facts, ...answerEndFacts(res, upstream, relayed) });
  const settled = await settleRequest(billing, report ?? relayed.scanner?.report ?? null);
  return afterSettling(ended, settled);
}

function callerFacts(req: IncomingMessage, parsed: ParsedBody): LogFacts {
  const endUser = parsed.json?.user ?? headerValue(req.headers, SVC_HEADER.endUser);
  return {
    endUser: typeof endUser === 'string' ? endUser.slice(0, 256) : null,
    requestedModel: parsed.model ?? null,
  };
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
  { req, res }: Pick<Incoming, 'req' | 'res'>,
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

/** The answer's head and who served it (`streamed`: the answer is an event stream). */
function answerHeadFacts(
  upstream: Dispatcher.ResponseData,
  startedMs: number,
  model: string | undefined,
): LogFacts {
  const seller = decodeSellerHeaders(upstream.headers);
  const serviceId = seller.service ?? null;
  return {
    ttfbMs: Math.round(performance.now() - startedMs),
    status: upstream.statusCode,
    peerId: seller.peerId ?? null,
    provider: seller.provider ?? null,
    serviceId,
    servedModel: serviceId ?? model ?? null,
    streamed: String(upstream.headers['content-type'] ?? '').includes('text/event-stream'),
  };
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
  const { deps, reservation, requestId } = billing;
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
      await settle(deps, reservation, requestId, null);
      throw new SvcError('spend_tracking_unavailable', { details: { request_id: requestId } });
    }
  }
  return report;
}
