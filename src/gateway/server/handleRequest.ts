/** One request: route, throttle, authenticate, dispatch, answer errors in the client's style, log. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ErrorStyle,
  errorStyleForPath,
  isSvcError,
  SvcError,
  toSvcError,
} from '../../errors/index.js';
import { sendError, sendJson } from '../../http/index.js';
import { logRequestLine } from '../../log/index.js';
import { formatUsd } from '../../money/index.js';
import type { LogRow } from '../store/types.js';
import { authenticate, type Caller, storeCall } from './authenticate.js';
import type { GatewayDeps } from './deps.js';
import type { Incoming } from './incoming.js';
import { keyView } from './keyView.js';
import { listModels } from './listModels.js';
import { proxyRequest } from './proxyRequest.js';
import { failureFacts, type LogFacts, newLogRow } from './requestLog.js';
import { matchRoute, type Route } from './routes.js';
import { topupRoute } from './topupRoute.js';

/** What is known of a request when it arrives, for its log row. */
type Arrival = Parameters<typeof newLogRow>[0];

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Handles one HTTP request end to end; never throws. Its steps return what they learned, a failed
 * one with what it knew (docs/decisions/188-gateway-steps-return-facts.md): the log row is
 * written here, and only here.
 */
export async function handleRequest(
  deps: GatewayDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const startedMs = performance.now();
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const method = req.method ?? 'GET';
  const address = deps.forwarded.origin(req).address;
  // The row itself (its id, its empty fields) is built once the answer went out.
  const arrived: Arrival = { at: deps.now(), method, route: path, clientAddress: address };
  const style = errorStyleForPath(path);
  let facts: LogFacts = {};
  try {
    const route = matchRoute(method, path);
    if (!route) throw new SvcError('not_found');
    refuseThrottled(deps, address);
    const caller = await authenticateCaller(deps, req, address);
    facts = {
      keyId: caller.key.id,
      workspaceId: caller.workspace.id,
      memberId: caller.member?.id ?? null,
    };
    facts = { ...facts, ...(await dispatch(deps, route, { req, res, caller, startedMs })) };
  } catch (error) {
    const failed = failureFacts(error);
    facts = { ...facts, ...failed.facts, ...answerFailure(deps, res, failed.cause, style) };
  } finally {
    writeLog(deps, { ...newLogRow(arrived), ...facts }, startedMs);
  }
}

/** `rate_limited` while the address is held back for failed authentications. */
function refuseThrottled(deps: GatewayDeps, address: string): void {
  const waitSeconds = deps.throttle.retryAfterSeconds(address);
  if (waitSeconds > 0) {
    throw new SvcError('rate_limited', {
      message: `Too many failed authentications from this address. Retry in ${waitSeconds} s.`,
      headers: { 'retry-after': String(waitSeconds) },
    });
  }
}

/** The caller's key; a 401 counts against the address. */
async function authenticateCaller(
  deps: GatewayDeps,
  req: IncomingMessage,
  address: string,
): Promise<Caller> {
  try {
    return await authenticate(
      deps.store,
      req.headers.authorization,
      deps.now(),
      firstValue(req.headers['x-api-key']),
    );
  } catch (error) {
    if (isSvcError(error) && error.status === 401) deps.throttle.recordFailure(address);
    throw error;
  }
}

/** Runs the route's step; what it learned for the log. */
async function dispatch(deps: GatewayDeps, route: Route, incoming: Incoming): Promise<LogFacts> {
  const { caller, req, res } = incoming;
  switch (route.kind) {
    case 'key': {
      const view = await storeCall(() =>
        keyView(deps.store, caller.key, deps.buyerAddress(caller.key.identity), deps.now()),
      );
      sendJson(res, 200, view);
      return { status: 200 };
    }
    case 'topup':
      return topupRoute(deps, caller, req, res);
    case 'models':
      return listModels(deps, caller, req, res);
    case 'proxy':
      return proxyRequest(deps, incoming, route);
  }
}

/** Answers a failure in the client's API style, logging the ones an operator must see. */
function answerFailure(
  deps: GatewayDeps,
  res: ServerResponse,
  error: unknown,
  style: ErrorStyle,
): LogFacts {
  const svcError = toSvcError(error);
  if (svcError.code === 'internal_error') deps.logger.error({ err: error }, 'request failed');
  if (svcError.code === 'store_unavailable') {
    deps.logger.warn({ err: svcError.cause }, 'gateway store unavailable');
  }
  sendError(res, svcError, style);
  return { status: svcError.status, errorCode: svcError.code };
}

/** Writes the request log row and the one-line request log. */
function writeLog(deps: GatewayDeps, known: LogRow, startedMs: number): void {
  const latencyMs = Math.round(performance.now() - startedMs);
  const log: LogRow = { ...known, latencyMs };
  deps.logs.write(log);
  logRequestLine(deps.logger, {
    requestId: log.requestId,
    route: log.route,
    model: log.serviceId ?? log.requestedModel,
    peer: log.peerId,
    status: log.status,
    inputTokens: log.inputTokens,
    cachedInputTokens: log.cachedInputTokens,
    outputTokens: log.outputTokens,
    costUsd: formatUsd(log.costMicro),
    ms: latencyMs,
    errorCode: log.errorCode,
  });
}
