/**
 * The tunnel's contract between a gateway and a tunnel relay. Both protocols reuse the
 * `/svc/request/1` framing (src/network/requestWire.ts): HEAD, DATA*, END out; HEAD, DATA*,
 * TRAILER back. The relay opens `HTTP` streams to a registered gateway over the connection the
 * gateway dialled; the gateway opens one `REGISTER` request after each (re)connect.
 */
import { z } from 'zod';

/** One public HTTP request, relay -> gateway. */
export const TUNNEL_HTTP_PROTOCOL = '/svc/tunnel/http/1';
/** Registration, gateway -> relay; answered with `RegisterReply`. */
export const TUNNEL_REGISTER_PROTOCOL = '/svc/tunnel/register/1';
/** Path of the registration request. */
export const REGISTER_PATH = '/register';

export const registerReplySchema = z.strictObject({
  /** The gateway's id at the relay (its peer id, 40 hex). */
  gatewayId: z.string().regex(/^[0-9a-f]{40}$/),
  /** Public base URL of the gateway: `<public-url>/<gateway-id>` (Anthropic-style base). */
  baseUrl: z.url().max(2048),
});
export type RegisterReply = z.infer<typeof registerReplySchema>;

/** Headers that describe one hop, never copied across the tunnel. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
  'expect',
]);

/** A header map flattened to single strings (repeated headers joined as HTTP allows). */
export function flattenHeaders(
  headers: Record<string, string | string[] | undefined>,
  drop: (name: string) => boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || drop(lower)) continue;
    out[lower] = Array.isArray(value) ? value.join(lower === 'set-cookie' ? '\n' : ', ') : value;
  }
  return out;
}
