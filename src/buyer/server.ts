/** The buyer's HTTP request handler: guards, routes, error rendering. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ErrorStyle, errorStyleForPath, SvcError, toSvcError } from '../errors/index.js';
import { countTokensAsync } from '../formats/index.js';
import { parseJsonRequest, readBody, sendError, sendJson } from '../http/index.js';
import type { BuyerService } from './BuyerService.js';
import { openProxyContext, type ProxyRoute } from './context.js';
import { handleControl } from './controlPlane.js';
import { gatewayAccessOf, gatewayLimitsOf } from './gatewayAuth.js';
import { assertLoopbackRequest } from './http.js';
import { handleMediaRoute } from './media/routes.js';
import { getModel, listModels } from './models.js';
import { proxyRequest } from './proxy.js';
import { PROXY_ROUTES } from './proxyRoutes.js';
import { serveProxied } from './serveProxied.js';

/** The model id of a `/v1/models/<id>` path; a malformed %-escape is a 404, not a 500. */
function decodedModelId(escaped: string): string {
  try {
    return decodeURIComponent(escaped);
  } catch {
    throw new SvcError('not_found', { message: `No model ${escaped}. Run GET /v1/models.` });
  }
}

const BASE = 'http://127.0.0.1';

/** A path of plain segments (letters, digits, `_`, `-`): URL parsing would return it unchanged. */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_-]+)+\/*$/;

/** The request's path without trailing slashes; a URL is parsed only when the path is not plain. */
function pathOf(target: string): string {
  const pathname = PLAIN_PATH.test(target) ? target : new URL(target, BASE).pathname;
  return pathname.replace(/\/+$/, '') || '/';
}

/** Builds the per-request handler of one buyer. */
export function createHandler(service: BuyerService, url: () => string) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = pathOf(req.url ?? '/');
    const method = req.method ?? 'GET';
    const style: ErrorStyle = errorStyleForPath(path);
    try {
      assertLoopbackRequest(req);
      if (await handleControl(service, method, path, res, url())) return;
      if (path === '/v1/models' || path.startsWith('/v1/models/')) {
        if (method !== 'GET') throw new SvcError('method_not_allowed');
        if (path === '/v1/models') {
          // A gateway key limited to certain models sees only those.
          const { access } = gatewayAccessOf(service.controlSecret, req.headers);
          const allowedModels = gatewayLimitsOf(access, req.headers).policy?.allowedModels;
          const query = new URL(req.url ?? '/', BASE).searchParams;
          listModels(service, query, res, allowedModels);
        } else getModel(service, decodedModelId(path.slice('/v1/models/'.length)), res);
        return;
      }
      if (path === '/v1/messages/count_tokens') {
        if (method !== 'POST') throw new SvcError('method_not_allowed');
        const raw = await readBody(req, service.deps.config.bodyLimitBytes, 'buyer.bodyLimitBytes');
        sendJson(res, 200, await countTokensAsync(parseJsonRequest(req, raw)));
        return;
      }
      if (await handleMediaRoute(service, req, res, path, method)) return;
      const route = PROXY_ROUTES[path];
      if (!route) {
        throw new SvcError('not_found', {
          message: `No route ${method} ${path}. Supported: /v1/chat/completions, /v1/responses, /v1/messages, /v1/messages/count_tokens, /v1/images/generations, /v1/images/edits, /v1/systemone, /api/v1/video/queue|retrieve, /fal/v1/video/queue|retrieve, /v1/models, /_svc/status, /_svc/peers, /metrics.`,
        });
      }
      if (method !== 'POST') throw new SvcError('method_not_allowed');
      await handleProxy(service, req, res, route);
    } catch (error) {
      const svcError = toSvcError(error);
      if (svcError.code === 'internal_error') {
        service.deps.logger.error({ err: error, path }, 'buyer request failed');
      }
      sendError(res, svcError, style);
      // The unread body is dropped once the answer is out.
      if (svcError.headers?.connection === 'close') res.once('finish', () => req.destroy());
    }
  };
}

async function handleProxy(
  service: BuyerService,
  req: IncomingMessage,
  res: ServerResponse,
  route: ProxyRoute,
): Promise<void> {
  const opened = openProxyContext(service, req, res, route);
  const failed = await serveProxied(
    opened,
    async () => {
      const raw = await readBody(req, service.deps.config.bodyLimitBytes, 'buyer.bodyLimitBytes');
      return { body: parseJsonRequest(req, raw), bodyBytes: raw.length, rawBody: raw };
    },
    proxyRequest,
  );
  if (failed?.headers?.connection === 'close') res.once('finish', () => req.destroy());
}
