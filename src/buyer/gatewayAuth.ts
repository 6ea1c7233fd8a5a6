/**
 * Gateway authentication (src/protocol/headers.ts): once `<data-dir>/gateway/control.secret`
 * exists, identities other than `default` need the control secret; the gateway's routing
 * policy, max-cost and request-id headers are honoured only with a valid secret.
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { FileChanges } from '../config/index.js';
import { SvcError } from '../errors/index.js';
import { DEFAULT_IDENTITY } from '../identity/index.js';
import { type MicroUsd, parseUsd } from '../money/index.js';
import {
  decodeControlHeaders,
  decodeRoutingPolicy,
  type RoutingPolicyWire,
  SVC_HEADER,
} from '../protocol/index.js';

export interface GatewayAccess {
  identity: string;
  /** True when the request carried the valid control secret. */
  authenticated: boolean;
}

/** Reads the control secret (cached by mtime, stat'ed when a watch says it may have changed). */
export class ControlSecret {
  readonly path: string;
  private readonly changes: FileChanges;
  private cached: { mtimeMs: number; secret: Buffer } | undefined;

  constructor(dataDir: string) {
    this.path = join(dataDir, 'gateway', 'control.secret');
    this.changes = new FileChanges(this.path, true);
  }

  current(): Buffer | undefined {
    const mtimeMs = this.changes.mtimeMs();
    if (mtimeMs === undefined) return undefined;
    if (this.cached?.mtimeMs !== mtimeMs) {
      this.cached = { mtimeMs, secret: Buffer.from(readFileSync(this.path, 'utf8').trim()) };
    }
    return this.cached.secret;
  }

  close(): void {
    this.changes.close();
  }

  /** Decides identity and authentication for one request; 401 `gateway_auth_required` when needed. */
  check(identityHeader: string | undefined, authHeader: string | undefined): GatewayAccess {
    const identity = identityHeader?.trim() || DEFAULT_IDENTITY;
    const secret = this.current();
    const given = authHeader === undefined ? undefined : Buffer.from(authHeader.trim());
    const authenticated =
      secret !== undefined &&
      given !== undefined &&
      given.length === secret.length &&
      timingSafeEqual(given, secret);
    if (identity !== DEFAULT_IDENTITY && secret !== undefined && !authenticated) {
      throw new SvcError('gateway_auth_required');
    }
    return { identity, authenticated };
  }
}

/** Who sent a request, and the gateway's request id when the gateway did. */
export function gatewayAccessOf(
  secret: ControlSecret,
  headers: IncomingHttpHeaders,
): { access: GatewayAccess; requestId?: string } {
  const control = decodeControlHeaders(headers);
  const access = secret.check(control.buyerIdentity, control.gatewayAuth);
  return access.authenticated && control.requestId
    ? { access, requestId: control.requestId }
    : { access };
}

/** The last max-cost header parsed: a gateway sends the same amount request after request. */
let lastMaxCost: { text: string; micro: MicroUsd } | undefined;

/** The gateway's routing policy and cost cap; both honoured only from an authenticated gateway. */
export function gatewayLimitsOf(
  access: GatewayAccess,
  headers: IncomingHttpHeaders,
): { policy?: RoutingPolicyWire; maxCostMicro?: MicroUsd } {
  if (!access.authenticated) return {};
  const control = decodeControlHeaders(headers);
  const policy = control.routingPolicy ? decodeRoutingPolicy(control.routingPolicy) : undefined;
  let maxCostMicro: MicroUsd | undefined;
  if (control.maxCostUsd && lastMaxCost?.text === control.maxCostUsd) {
    maxCostMicro = lastMaxCost.micro;
  } else if (control.maxCostUsd) {
    try {
      maxCostMicro = parseUsd(control.maxCostUsd);
      lastMaxCost = { text: control.maxCostUsd, micro: maxCostMicro };
    } catch {
      throw new SvcError('invalid_request', {
        message: `${SVC_HEADER.maxCostUsd} must be a USD amount like "0.123456".`,
      });
    }
  }
  return {
    ...(policy ? { policy } : {}),
    ...(maxCostMicro !== undefined ? { maxCostMicro } : {}),
  };
}
