/** Headers sent to the buyer: the client's, minus credentials, cookies and every `x-svc-*`. */
import type { IncomingHttpHeaders } from 'node:http';
import { SVC_HEADER_PREFIX } from '../../protocol/index.js';

const DROPPED = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);

/** The client's headers that may travel on, plus the gateway's control headers. */
export function forwardHeaders(
  incoming: IncomingHttpHeaders,
  control: Record<string, string>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || DROPPED.has(name) || name.startsWith(SVC_HEADER_PREFIX)) continue;
    out[name] = value;
  }
  return Object.assign(out, control);
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'trailer']);

/** The buyer's response headers that travel back to the client. */
export function responseHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}
