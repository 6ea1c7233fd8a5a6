/**
 * Forwarding one request to the buyer: reserve on every budget, send with the control headers,
 * stream the answer through untouched, then settle what the buyer says it cost (or, when it cannot
 * say, the whole reservation: spend is never under-counted).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ERROR_CODES, isErrorCode, SvcError } from '../../errors/index.js';
import { parseJsonObject, readBody, writeChunk } from '../../http/index.js';
import { formatUsd, type MicroUsd } from '../../money/index.js';
import {
  decodeSellerHeaders,
  encodeControlHeaders,
  headerValue,
  SVC_HEADER,
} from '../../protocol/index.js';
import { requestMaxCost } from '../budget/requestMaxCost.js';
import { encodeBuyerPolicy } from '../policy/mergePolicies.js';
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
import { resolvePolicy } from './resolvePolicy.js';
import type { Route } from './routes.js';

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

/**
 * What to reserve: the request's own maximum cost, all or nothing, when its model's prices are
 * known (docs/decisions/121-reservations-sized-to-the-request.md); else up to the configured
 * maximum per request, whatever room there is.
 */
async function reservationSize(
  deps: GatewayDeps,
  req: IncomingMessage,
  parsed: ParsedBody,
  model: string | undefined,
): Promise<{ maxAmountMicro: MicroUsd; minAmountMicro: MicroUsd }> {
  const configured = deps.maxRequestCostMicro;
  const price = parsed.json && model ? await deps.prices.priceOf(model) : undefined;
  const sized = price && parsed.json ? requestMaxCost(req.url ?? '/', parsed.json, price) : null;
  if (sized === null) return { maxAmountMicro: configured, minAmountMicro: 1n };
  let amount = configured;
  if (sized < amount) amount = sized;
  return { maxAmountMicro: amount, minAmountMicro: amount > 0n ? amount : 1n };
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
  const endUser = parsed.json?.user ?? headerValue(req.headers, SVC_HEADER.endUser);
  log.endUser = typeof endUser === 'string' ? endUser.slice(0, 256) : null;
  log.requestedModel = parsed.model ?? null;
  const { policy, model } = await resolvePolicy(deps.store, caller, parsed.model);
  let forwardBody = body;
  if (parsed.json && model !== parsed.model) {
    forwardBody = Buffer.from(JSON.stringify({ ...parsed.json, model }));
  }
  const requestId = `req_${randomUUID()}`;
  log.requestId = requestId;

  let reservation: Reservation | null = null;
  if (route.billed) {
    const { maxAmountMicro, minAmountMicro } = await reservationSize(deps, req, parsed, model);
    const result = await storeCall(() =>
      deps.store.reserve({
        reservationId: requestId,
        keyId: caller.key.id,
        maxAmountMicro,
        minAmountMicro,
        now: deps.now(),
      }),
    );
    if (!result.ok) {
      const { refusal } = result;
      const remaining = refusal.limitMicro - refusal.committedMicro;
      throw new SvcError('spend_limit_reached', {
        message: `The ${refusal.period} ${refusal.level} budget has no room for this request.`,
        details: {
          level: refusal.level,
          period: refusal.period,
          limit_usd: formatUsd(refusal.limitMicro),
          spent_usd: formatUsd(refusal.spentMicro),
          remaining_usd: formatUsd(remaining > 0n ? remaining : 0n),
          resets_at: refusal.resetsAt === null ? null : new Date(refusal.resetsAt).toISOString(),
        },
      });
    }
    reservation = result.reservation;
  }

  const control = encodeControlHeaders({
    buyerIdentity: caller.workspace.identity,
    gatewayAuth: deps.controlSecret,
    requestId,
    ...(Object.keys(policy).length > 0 ? { routingPolicy: encodeBuyerPolicy(policy) } : {}),
    ...(reservation?.limited ? { maxCostUsd: formatUsd(reservation.amountMicro) } : {}),
  });

  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await deps.buyer.request({
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
  log.ttfbMs = Math.round(performance.now() - startedMs);
  log.status = upstream.statusCode;
  const seller = decodeSellerHeaders(upstream.headers);
  log.peerId = seller.peerId ?? null;
  log.provider = seller.provider ?? null;
  log.serviceId = seller.service ?? null;
  log.servedModel = log.serviceId ?? model ?? null;
  const streamed = String(upstream.headers['content-type'] ?? '').includes('text/event-stream');
  log.streamed = streamed;

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

  res.writeHead(upstream.statusCode, responseHeaders(upstream.headers));
  const scanner = streamed ? new SseUsageScanner() : null;
  let buyerBroke = false;
  try {
    const declaredLength = Number(upstream.headers['content-length'] ?? Number.NaN);
    if (!streamed && declaredLength <= SMALL_BODY_BYTES) {
      // A small complete answer goes out with its headers in one write (no stream to keep open).
      const body = Buffer.from(await upstream.body.arrayBuffer());
      if (upstream.statusCode >= 400) log.errorCode = errorCodeOf(body);
      res.end(body);
      return await finish(deps, reservation, requestId, report, log);
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
      buyerBroke = true;
      res.destroy();
    }
  }
  const streamFailure = scanner?.report?.errorCode;
  if (buyerBroke) {
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
  await finish(deps, reservation, requestId, report ?? scanner?.report ?? null, log);
}

/** Settles (asking the buyer when the answer carried no cost) or, for free routes, just logs. */
async function finish(
  deps: GatewayDeps,
  reservation: Reservation | null,
  requestId: string,
  report: CostReport | null,
  log: LogRow,
): Promise<void> {
  if (reservation) {
    const known = report ?? reportOf(await lookupCost(deps.buyer, requestId));
    await settle(deps, reservation, requestId, known, log);
  } else if (report) {
    applyReport(log, report);
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

function applyReport(log: LogRow, report: CostReport): void {
  log.costMicro = report.costMicro;
  log.inputTokens = report.usage.inputTokens;
  log.cachedInputTokens = report.usage.cachedInputTokens;
  log.outputTokens = report.usage.outputTokens;
}

/**
 * Settles a reservation. An unknown cost (the buyer down or the request still open at the buyer)
 * leaves the reservation held, so it still counts against every budget, and recovery settles it
 * with what the buyer's journal says was committed (docs/decisions/122-request-journal.md): a
 * buyer killed mid-stream does not cost the key its whole reservation.
 */
async function settle(
  deps: GatewayDeps,
  reservation: Reservation,
  requestId: string,
  report: CostReport | null,
  log: LogRow,
): Promise<void> {
  if (!report) {
    log.errorCode ??= 'spend_tracking_unavailable';
    return;
  }
  // The store caps the charge at the reservation too; the log shows the same amount.
  const charged: CostReport = { costMicro: reservation.amountMicro, usage: report.usage };
  if (report.costMicro < reservation.amountMicro) charged.costMicro = report.costMicro;
  applyReport(log, charged);
  try {
    await deps.store.settle({
      reservationId: reservation.id,
      requestId,
      costMicro: charged.costMicro,
      usage: charged.usage,
      now: deps.now(),
    });
  } catch (error) {
    // The reservation stays held (counted against the budgets) until an operator settles it.
    deps.logger.error({ err: error, requestId }, 'settling a reservation failed');
  }
}
