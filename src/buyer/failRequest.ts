/** A request that ends with an error before any answer: the client's error style, and its record. */
import type { SvcError } from '../errors/index.js';
import { sendError } from '../http/index.js';
import { SVC_HEADER } from '../protocol/index.js';
import { type ProxyContext, ZERO_USAGE } from './context.js';
import { finishRequest } from './finishRequest.js';

/** Sends an error in the client's style and records it. */
export function failRequest(ctx: ProxyContext, error: SvcError): void {
  sendError(ctx.res, error, ctx.request.route.style, {
    [SVC_HEADER.requestId]: ctx.request.id,
    ...(ctx.attempts.length ? { [SVC_HEADER.attempts]: ctx.attempts.join(', ') } : {}),
  });
  const peerId = typeof error.details?.peerId === 'string' ? error.details.peerId : null;
  finishRequest(ctx, {
    status: error.status,
    completed: false,
    streamed: false,
    peerId,
    provider: null,
    serviceId: null,
    model: typeof ctx.request.body.model === 'string' ? ctx.request.body.model : null,
    usage: ZERO_USAGE,
    costUsd: '0.000000',
    errorCode: error.code,
  });
}
