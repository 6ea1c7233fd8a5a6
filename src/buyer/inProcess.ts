/**
 * The buyer as a gateway in the same process calls it (docs/decisions/180-gateway-runs-its-buyer.md):
 * no HTTP hop and no second parse. The gateway hands over the body it parsed, the identity,
 * policy, cost cap, pin and request id as values (src/protocol/buyerCall.ts); the buyer answers
 * on the gateway's response, as it would on its own, and returns the request's record, which
 * the gateway settles on.
 */
import type { ServerResponse } from 'node:http';
import { SvcError, toSvcError } from '../errors/index.js';
import {
  type BuyerCall,
  type BuyerCallResult,
  type InProcessBuyer,
  type RequestRecord,
  SVC_HEADER,
} from '../protocol/index.js';
import type { BuyerService } from './BuyerService.js';
import { openProxyContext } from './context.js';
import { failRequest, proxyRequest } from './proxy.js';
import { PROXY_ROUTES } from './proxyRoutes.js';

async function serve(
  service: BuyerService,
  call: BuyerCall,
  res: ServerResponse,
): Promise<BuyerCallResult> {
  const route = Object.hasOwn(PROXY_ROUTES, call.path) ? PROXY_ROUTES[call.path] : undefined;
  if (!route) throw new SvcError('not_found', { message: `No route ${call.path}.` });
  // The pin rides as the header it is over HTTP; every other x-svc-* header is gone already.
  const headers = call.pin ? { ...call.headers, [SVC_HEADER.pinPeer]: call.pin } : call.headers;
  const ctx = openProxyContext(service, { headers, url: call.path }, res, route, {
    access: { identity: call.identity, authenticated: true },
    requestId: call.requestId,
  });
  let record: RequestRecord | undefined;
  ctx.onFinish = (written) => {
    record = written;
  };
  ctx.body = call.body;
  ctx.rawBody = Buffer.from(call.rawBody.buffer, call.rawBody.byteOffset, call.rawBody.byteLength);
  ctx.bodyBytes = call.rawBody.byteLength;
  if (call.policy) ctx.policy = call.policy;
  if (call.maxCostMicro !== undefined) ctx.maxCostMicro = call.maxCostMicro;
  try {
    await proxyRequest(ctx);
  } catch (error) {
    const svcError = toSvcError(error);
    if (svcError.code === 'internal_error') {
      service.deps.logger.error({ err: error }, 'proxy request failed');
    }
    failRequest(ctx, svcError);
  }
  return { record };
}

/** The in-process face of a running buyer, for a gateway in the same process. */
export function inProcessBuyer(service: BuyerService): InProcessBuyer {
  return {
    serves: (path) => Object.hasOwn(PROXY_ROUTES, path),
    serve: (call, res) => serve(service, call, res),
  };
}
