/** Console HTTP helpers: security headers on every reply, the session cookie, bounded JSON bodies. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../../../errors/index.js';
import { parseJsonObject, readBody } from '../../../http/index.js';

/** Scripts, styles, images and fetches from this origin only; no inline code, no frames. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

export const COOKIE_NAME = 'svc_console';
const MAX_BODY_BYTES = 64 * 1024;

/** Sends `body` with the security headers (never cached unless `cache` says so). */
export function send(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string | Buffer,
  extra: Record<string, string | string[]> = {},
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'cache-control': 'no-store',
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    ...extra,
  });
  res.end(body);
}

/** JSON reply; bigints become strings. */
export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  extra: Record<string, string | string[]> = {},
): void {
  const body = JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  send(res, status, 'application/json; charset=utf-8', body, extra);
}

/** The error reply of the console API: `{error:{code,message}}`. */
export function sendConsoleError(res: ServerResponse, error: SvcError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(
    res,
    error.status,
    { error: { code: error.code, message: error.message } },
    error.headers ?? {},
  );
}

/** The session id in the request's cookie, if any. */
export function sessionCookie(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE_NAME) return rest.join('=') || undefined;
  }
  return undefined;
}

/** True when the request reached us over TLS (directly or through a proxy that says so). */
export function isHttps(req: IncomingMessage): boolean {
  const socket = req.socket as { encrypted?: boolean };
  return Boolean(socket.encrypted) || req.headers['x-forwarded-proto'] === 'https';
}

/** Set-Cookie for a session: HttpOnly, SameSite=Strict, Secure over HTTPS, console path only. */
export function sessionCookieHeader(req: IncomingMessage, value: string, maxAgeSeconds: number) {
  const secure = isHttps(req) ? '; Secure' : '';
  return `${COOKIE_NAME}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

/** Reads a JSON object body of at most 64 KiB. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('application/json')) throw new SvcError('unsupported_media_type');
  const raw = await readBody(req, MAX_BODY_BYTES);
  return raw.length === 0 ? {} : parseJsonObject(raw);
}
