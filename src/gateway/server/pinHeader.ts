/**
 * A client's `x-svc-pin-peer` at the gateway (spec 4.5: the one way to pin a multipart image
 * edit): forwarded to the buyer when the key's policy allows the pinned seller (allow and block
 * lists) and the pinned model (the model allow-list), refused with 403 `model_not_allowed`
 * otherwise. Every other client `x-svc-*` header is still dropped (src/gateway/server/forwardHeaders.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { SvcError } from '../../errors/index.js';
import { headerValue, SVC_HEADER } from '../../protocol/index.js';
import { parsePinHeader } from '../../routing/index.js';
import { modelRefusal, sellerRefusal } from '../policy/mergePolicies.js';
import type { RoutingPolicy } from '../policy/types.js';

/** A pin the key may use: the header to forward, the seller and the model it pins. */
export interface GatewayPin {
  header: string;
  peerId: string;
  /** The pinned model: the header's service id, else the request's model (unknown for multipart). */
  model: string | undefined;
}

/**
 * The request's pin, checked against `policy`; undefined without the header. Throws
 * `invalid_request` (malformed) or `model_not_allowed` (outside the policy).
 */
export function pinOf(
  headers: IncomingHttpHeaders,
  policy: RoutingPolicy,
  model: string | undefined,
): GatewayPin | undefined {
  const header = headerValue(headers, SVC_HEADER.pinPeer)?.trim();
  if (!header) return undefined;
  const pin = parsePinHeader(header);
  const pinnedModel = pin.serviceId ?? model;
  const refusal =
    sellerRefusal(policy, pin.peerId) ??
    (pinnedModel !== undefined ? modelRefusal(policy, pinnedModel) : null);
  if (refusal) {
    throw new SvcError('model_not_allowed', {
      message: `${refusal}.`,
      details: { peerId: pin.peerId, ...(pinnedModel !== undefined ? { model: pinnedModel } : {}) },
    });
  }
  return { header, peerId: pin.peerId, model: pinnedModel };
}
