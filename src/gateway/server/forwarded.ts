/**
 * Who the client really is behind a reverse proxy. `X-Forwarded-For/-Proto/-Host/-Prefix` are
 * believed only when the TCP peer is a trusted proxy (`gateway.trustedProxies`) or the request
 * came through this gateway's own tunnel (it carries the in-process tunnel token); otherwise the
 * socket's address and the Host header are used and the forwarded headers are ignored.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/** Header the gateway's tunnel client adds on its loopback hop (never forwarded: x-svc-*). */
export const TUNNEL_TOKEN_HEADER = 'x-svc-tunnel-token';

/** Where a request came from, after deciding whether to believe forwarded headers. */
export interface ClientOrigin {
  /** The client's IP address (or `unknown`). */
  address: string;
  /** `https` or `http`. */
  proto: 'http' | 'https';
  /** Host (and port) the client addressed. */
  host: string;
  /** Path prefix the proxy strips (e.g. `/<gateway-id>` at a tunnel relay), or ''. */
  prefix: string;
}

/** Addresses whose verdict is remembered; a full map is emptied. */
const MAX_VERDICTS = 1_024;

/** Decides which proxies are believed. */
export class ForwardedTrust {
  private readonly trusted = new BlockList();
  private readonly verdicts = new Map<string, boolean>();
  private readonly tunnelToken: Buffer | undefined;

  /** `proxies`: IPs or CIDR ranges; `tunnelToken`: the secret the gateway's tunnel client sends. */
  constructor(proxies: readonly string[], tunnelToken?: string) {
    for (const entry of proxies) addRule(this.trusted, entry);
    this.tunnelToken = tunnelToken === undefined ? undefined : Buffer.from(tunnelToken);
  }

  /** True when `address` (the TCP peer) is a trusted proxy. */
  isTrusted(address: string | undefined): boolean {
    if (address === undefined) return false;
    // The list never changes, so a verdict holds: each request's peer is checked once, not with a
    // native `BlockList` call and an address parse per request.
    const known = this.verdicts.get(address);
    if (known !== undefined) return known;
    const family = isIP(address);
    if (family === 0) return false;
    const trusted = this.trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
    // Only addresses are kept (at most 45 characters each).
    if (this.verdicts.size >= MAX_VERDICTS) this.verdicts.clear();
    this.verdicts.set(address, trusted);
    return trusted;
  }

  private fromTunnel(req: IncomingMessage): boolean {
    const sent = req.headers[TUNNEL_TOKEN_HEADER];
    if (this.tunnelToken === undefined || typeof sent !== 'string') return false;
    const bytes = Buffer.from(sent);
    return bytes.length === this.tunnelToken.length && timingSafeEqual(bytes, this.tunnelToken);
  }

  /** The client's origin as this gateway should believe it. */
  origin(req: IncomingMessage): ClientOrigin {
    const peer = stripMapped(req.socket.remoteAddress);
    const direct: ClientOrigin = {
      address: peer ?? 'unknown',
      proto: 'encrypted' in req.socket && req.socket.encrypted === true ? 'https' : 'http',
      host: hostHeader(req.headers.host) ?? '127.0.0.1',
      prefix: '',
    };
    const viaTunnel = this.fromTunnel(req);
    if (!viaTunnel && !this.isTrusted(peer)) return direct;
    // Walk X-Forwarded-For from the right: the first address that is not a trusted proxy is the
    // client (entries further left were written by the client itself and prove nothing).
    const chain = headerList(req.headers['x-forwarded-for']);
    let address = direct.address;
    for (let i = chain.length - 1; i >= 0; i--) {
      const hop = stripMapped(chain[i]);
      if (hop === undefined || isIP(hop) === 0) break;
      address = hop;
      if (!this.isTrusted(hop)) break;
    }
    const proto = headerList(req.headers['x-forwarded-proto'])[0];
    const host = hostHeader(headerList(req.headers['x-forwarded-host'])[0]);
    const prefix = headerList(req.headers['x-forwarded-prefix'])[0];
    return {
      address,
      proto: proto === 'https' ? 'https' : proto === 'http' ? 'http' : direct.proto,
      host: host ?? direct.host,
      prefix:
        prefix !== undefined && /^(\/[A-Za-z0-9._~-]{1,128}){1,4}$/.test(prefix) ? prefix : '',
    };
  }
}

function addRule(list: BlockList, entry: string): void {
  const [address, bits] = entry.trim().split('/');
  const family = isIP(address ?? '');
  if (family === 0) throw new TypeError(`gateway.trustedProxies: "${entry}" is not an IP or CIDR`);
  const type = family === 6 ? 'ipv6' : 'ipv4';
  if (bits === undefined) {
    list.addAddress(address!, type);
    return;
  }
  const prefix = Number(bits);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
    throw new TypeError(`gateway.trustedProxies: "${entry}" has an invalid prefix length`);
  }
  list.addSubnet(address!, prefix, type);
}

function headerList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const joined = Array.isArray(value) ? value.join(',') : value;
  // Bounded: a header is at most what Node's parser accepts; keep at most 32 hops.
  return joined
    .split(',')
    .slice(-32)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

function stripMapped(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** A Host value when it looks like one (no spaces, slashes or userinfo), else undefined. */
function hostHeader(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return /^[A-Za-z0-9.:[\]-]{1,255}$/.test(value) ? value : undefined;
}
