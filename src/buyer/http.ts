/** HTTP rules of the buyer: the loopback guard and the headers a seller may see. */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../errors/index.js';
import { SVC_HEADER_PREFIX } from '../protocol/index.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Host headers already judged: a client sends the same one on every request. */
const judged = new Map<string, boolean>();

/** True for loopback host names (with or without port). */
export function isLoopbackHost(hostHeader: string): boolean {
  const known = judged.get(hostHeader);
  if (known !== undefined) return known;
  const loopback = judgeHost(hostHeader);
  // Bounded: a client sending ever new names is judged afresh once 64 are remembered.
  if (judged.size >= 64) judged.clear();
  if (hostHeader.length <= 256) judged.set(hostHeader, loopback);
  return loopback;
}

function judgeHost(hostHeader: string): boolean {
  let host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) host = host.slice(0, host.indexOf(']') + 1);
  else if (host.includes(':') && host.split(':').length === 2) host = host.split(':')[0]!;
  return LOOPBACK_HOSTS.has(host) || host.endsWith('.localhost');
}

/** DNS-rebinding guard: Host (and Origin when sent) must be loopback, else 403. */
export function assertLoopbackRequest(req: IncomingMessage): void {
  const host = req.headers.host;
  if (!host || !isLoopbackHost(host)) {
    throw new SvcError('forbidden_host', { details: { host: host ?? null } });
  }
  const origin = req.headers.origin;
  if (origin && origin !== 'null') {
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      throw new SvcError('forbidden_host', { details: { origin } });
    }
    if (!isLoopbackHost(originHost)) throw new SvcError('forbidden_host', { details: { origin } });
  }
}

/** Headers never sent to sellers: credentials, cookies, svc control headers, hop-by-hop. */
const DROPPED = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'cookie',
  'set-cookie',
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'origin',
  'referer',
  'expect',
]);

/** The client headers a seller may see. */
export function headersForSeller(req: Pick<IncomingMessage, 'headers'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    const lower = name.toLowerCase();
    if (DROPPED.has(lower) || lower.startsWith(SVC_HEADER_PREFIX) || value === undefined) continue;
    out[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  out['content-type'] = 'application/json';
  return out;
}
