/**
 * The buyer as a gateway in the same process calls it (docs/decisions/180-gateway-runs-its-buyer.md):
 * no HTTP hop and no second parse. The gateway hands over the body it parsed, the identity,
 * policy, cost cap, pin and request id as values (src/protocol/buyerCall.ts); the buyer answers
 * on the gateway's response, as it would on its own, and returns the request's record, which
 * the gateway settles on.
 */
import type { ServerResponse } from 'node:http';
import { SvcError } from '../errors/index.js';
import type {
  BuyerCall,
  BuyerCallResult,
  InProcessBuyer,
  RequestRecord,
} from '../protocol/index.js';
import type { BuyerService } from './BuyerService.js';
import { openProxyContext, type RequestLimits } from './context.js';
import { proxyRequest } from './proxy.js';
import { PROXY_ROUTES } from './proxyRoutes.js';
import { serveProxied } from './serveProxied.js';

/** The limits the gateway handed over with the call (always a value: none are read from headers). */
function limitsOf(call: BuyerCall): RequestLimits {
  return {
    ...(call.policy ? { policy: call.policy } : {}),
    ...(call.maxCostMicro !== undefined ? { maxCostMicro: call.maxCostMicro } : {}),
    ...(call.pin ? { pin: call.pin } : {}),
  };
}

async function serve(
  service: BuyerService,
  call: BuyerCall,
  res: ServerResponse,
): Promise<BuyerCallResult> {
  const route = Object.hasOwn(PROXY_ROUTES, call.path) ? PROXY_ROUTES[call.path] : undefined;
  if (!route) throw new SvcError('not_found', { message: `No route ${call.path}.` });
  let record: RequestRecord | undefined;
  const opened = openProxyContext(service, { headers: call.headers, url: call.path }, res, route, {
    access: { identity: call.identity, authenticated: true },
    requestId: call.requestId,
    onFinish: (written) => {
      record = written;
    },
  });
  const { rawBody } = call;
  await serveProxied(
    opened,
    () => ({
      body: call.body,
      rawBody: Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength),
      bodyBytes: rawBody.byteLength,
      limits: limitsOf(call),
    }),
    proxyRequest,
  );
  return { record };
}

/** The in-process face of a running buyer, for a gateway in the same process. */
export function inProcessBuyer(service: BuyerService): InProcessBuyer {
  return {
    serves: (path) => Object.hasOwn(PROXY_ROUTES, path),
    serve: (call, res) => serve(service, call, res),
  };
}
