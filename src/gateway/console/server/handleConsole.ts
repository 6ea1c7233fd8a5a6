/** Routes `/console...` on the gateway: static assets, sign-in/out, page data, mutations, CSV. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isSvcError, SvcError, toSvcError } from '../../../errors/index.js';
import { logsToCsv } from '../../admin/logCsv.js';
import { hashSecret } from '../../keys/secrets.js';
import { asset } from './assets.js';
import type { ConsoleDeps } from './deps.js';
import {
  readJsonObject,
  send,
  sendConsoleError,
  sendJson,
  sessionCookie,
  sessionCookieHeader,
} from './http.js';
import { runMutation } from './mutations.js';
import { requireStaff } from './scope.js';
import { checkCsrf, sessionSummary, signInWithKey, signInWithLink, viewerOf } from './sessions.js';
import { pageData, visibleLogs } from './views.js';

/** True for paths the console answers. */
export function isConsolePath(path: string): boolean {
  return path === '/console' || path.startsWith('/console/');
}

const SIGNED_OUT = 'svc_console=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0';

/** Refuses the request when its address failed sign-in too often (shared with the API's throttle). */
function throttled(deps: ConsoleDeps, address: string): void {
  const wait = deps.throttle.retryAfterSeconds(address);
  if (wait > 0) {
    throw new SvcError('rate_limited', {
      message: `Too many failed sign-ins from this address. Retry in ${wait} s.`,
      headers: { 'retry-after': String(wait) },
    });
  }
}

function signedInPage(): string {
  return '<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/console/"><title>Signed in</title><a href="/console/">Continue to the console</a>';
}

async function signInLink(
  deps: ConsoleDeps,
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
) {
  const address = req.socket.remoteAddress ?? 'unknown';
  throttled(deps, address);
  const session = await signInWithLink(deps, token);
  if (!session) {
    deps.throttle.recordFailure(address);
    send(
      res,
      401,
      'text/html; charset=utf-8',
      '<!doctype html><meta charset="utf-8"><title>Link not valid</title><p>This sign-in link is unknown, used or expired. Ask for a new one with <code>svc gateway console login</code>.</p>',
    );
    return;
  }
  send(res, 200, 'text/html; charset=utf-8', signedInPage(), {
    'set-cookie': sessionCookieHeader(req, session.cookie, session.maxAgeSeconds),
  });
}

async function api(deps: ConsoleDeps, req: IncomingMessage, res: ServerResponse, url: URL) {
  const path = url.pathname.slice('/console/api/'.length);
  const method = req.method ?? 'GET';
  const address = req.socket.remoteAddress ?? 'unknown';
  if (method === 'POST' && path === 'sign-in') {
    checkCsrf(req, null);
    throttled(deps, address);
    const body = await readJsonObject(req);
    let session: Awaited<ReturnType<typeof signInWithKey>>;
    try {
      session = await signInWithKey(deps, body.key);
    } catch (error) {
      if (isSvcError(error) && error.status === 401) deps.throttle.recordFailure(address);
      throw error;
    }
    sendJson(
      res,
      200,
      { ok: true },
      {
        'set-cookie': sessionCookieHeader(req, session.cookie, session.maxAgeSeconds),
      },
    );
    return;
  }
  if (method === 'POST' && path === 'sign-out') {
    const cookie = sessionCookie(req);
    if (cookie) {
      const viewer = await viewerOf(deps, req).catch(() => null);
      if (viewer) checkCsrf(req, viewer.session);
      await deps.store.consoleTables().deleteSession(hashSecret(cookie));
    }
    sendJson(res, 200, { ok: true }, { 'set-cookie': SIGNED_OUT });
    return;
  }
  const viewer = await viewerOf(deps, req);
  if (method === 'GET' && path.startsWith('view/')) {
    const data = await pageData(deps, viewer, path.slice('view/'.length), url.searchParams);
    sendJson(res, 200, { session: sessionSummary(viewer), data });
    return;
  }
  if (method === 'GET' && path === 'logs.csv') {
    const rows = await visibleLogs(deps, requireStaff(viewer), url.searchParams);
    send(res, 200, 'text/csv; charset=utf-8', logsToCsv(rows), {
      'content-disposition': 'attachment; filename="requests.csv"',
    });
    return;
  }
  if (method === 'POST') {
    checkCsrf(req, viewer.session);
    const body = await readJsonObject(req);
    sendJson(res, 200, await runMutation(deps, viewer, path, body));
    return;
  }
  throw new SvcError('not_found');
}

/** Handles one console request; never throws. */
export async function handleConsole(
  deps: ConsoleDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  try {
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const path = url.pathname;
    if (path.startsWith('/console/api/')) return await api(deps, req, res, url);
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new SvcError('method_not_allowed');
    if (path === '/console') {
      send(res, 308, 'text/plain', '', { location: '/console/' });
      return;
    }
    if (path === '/console/login')
      return await signInLink(deps, req, res, url.searchParams.get('token') ?? '');
    const name = path === '/console/' ? 'index.html' : path.slice('/console/assets/'.length);
    const file =
      path === '/console/' || path.startsWith('/console/assets/') ? asset(name) : undefined;
    if (!file) throw new SvcError('not_found');
    send(res, 200, file.contentType, file.body, {
      'cache-control': name === 'index.html' ? 'no-cache' : 'max-age=300',
    });
  } catch (error) {
    const svcError = toSvcError(error);
    if (svcError.code === 'internal_error')
      deps.logger.error({ err: error }, 'console request failed');
    sendConsoleError(res, svcError);
  }
}
