/**
 * Handles one buyer request on the seller, as one pipeline for text and media: the path must be
 * one some provider relays, the body is read and routed to the provider offering its model, the
 * request is admitted (concurrency slot, payment), then served by its variant — text (relayed or
 * the demo's, metered on the way back) or media (images, video jobs, decisions) — and every
 * failure becomes one error reply in the client's API style. A served reply names the service and
 * price its receipt signs.
 */
import { errorStyleForPath, renderError, SvcError, toSvcError } from '../errors/index.js';
import type { InboundRequest, OutboundReply } from '../network/index.js';
import { mediaBilling, mediaKindOf, serveMedia } from './media/serveMedia.js';
import { admit } from './pipeline/admission.js';
import type { HandlerDeps } from './pipeline/deps.js';
import { checkPath, readBody, routeOf } from './pipeline/route.js';
import { noteRequest, withRequestLines } from './requestLine.js';
import { serveText, textBilling } from './text.js';

export type { HandlerDeps, RuntimeProvider } from './pipeline/deps.js';

const encoder = new TextEncoder();

function errorReply(error: SvcError, path: string): OutboundReply {
  return {
    status: error.status,
    headers: { 'content-type': 'application/json', ...(error.headers ?? {}) },
    body: encoder.encode(JSON.stringify(renderError(error, errorStyleForPath(path)))),
    trailer: () => ({ error: error.code }),
  };
}

/** Creates the request handler for `serveRequests`. */
export function createSellerHandler(
  deps: HandlerDeps,
): (request: InboundRequest) => Promise<OutboundReply> {
  return withRequestLines(deps.logger, async (request) => {
    try {
      return await handle(deps, request);
    } catch (error) {
      const svcError = toSvcError(error);
      if (svcError.code === 'internal_error')
        deps.logger.error({ err: String(error) }, 'seller handler failed');
      return errorReply(svcError, request.path);
    }
  });
}

async function handle(deps: HandlerDeps, request: InboundRequest): Promise<OutboundReply> {
  if (request.method !== 'POST') throw new SvcError('method_not_allowed');
  const providers = deps.providers();
  checkPath(providers, request.path);
  const body = readBody(request);
  const route = routeOf(providers, request.path, body.json);
  const media = mediaKindOf(route);
  const billing =
    media !== undefined
      ? mediaBilling(request, body, route, media)
      : textBilling(request, body, route);
  const admission = await admit(deps, request, route, billing);
  noteRequest(request, { model: route.model, requestId: admission.requestId });
  const admitted = { request, body, route, admission };
  try {
    const reply =
      media !== undefined ? await serveMedia(deps, admitted, media) : await serveText(admitted);
    // What the answer's receipt names besides its bytes and claims (src/network/receipts.ts).
    reply.terms = {
      serviceId: route.model,
      price: billing.price,
      ...(billing.unitMicroUsd !== undefined ? { unitMicroUsd: billing.unitMicroUsd } : {}),
    };
    return reply;
  } catch (error) {
    admission.release();
    await admission.billNothing();
    throw error;
  }
}
