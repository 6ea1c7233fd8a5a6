/**
 * The first steps of every seller request: the path must be one some provider relays, the body
 * is read (JSON object, or the `model` and `n` fields of a multipart image edit) and the request
 * is routed to the provider offering its model on that path.
 */
import type { ServiceConfig } from '../../config/index.js';
import { SvcError } from '../../errors/index.js';
import { parseJsonObject } from '../../http/index.js';
import type { ApiProtocol, InboundRequest } from '../../network/index.js';
import { multipartBoundary, multipartField } from '../multipart.js';
import type { RuntimeProvider } from './deps.js';

export type Json = Record<string, unknown>;

/** A request's body as the pipeline reads it. */
export interface SellerBody {
  contentType: string | undefined;
  /** Set for multipart bodies (image edits), whose bytes are relayed as they are. */
  boundary: string | undefined;
  /** The JSON body, or the multipart fields the seller reads. */
  json: Json;
}

/** The provider and service a request goes to. */
export interface SellerRoute {
  provider: RuntimeProvider;
  model: string;
  service: ServiceConfig;
  protocol: ApiProtocol;
}

/**
 * Reads the body: 400 `invalid_json` unless it is a UTF-8 JSON object (or multipart), 400
 * `invalid_request` when it nests too deep (src/http/jsonBody.ts).
 */
export function readBody(request: InboundRequest): SellerBody {
  const contentType = Object.entries(request.headers).find(
    ([name]) => name.toLowerCase() === 'content-type',
  )?.[1];
  const boundary = multipartBoundary(contentType);
  if (boundary !== undefined) {
    const json: Json = {};
    for (const field of ['model', 'n']) {
      const value = multipartField(request.body, boundary, field);
      if (value !== undefined) json[field] = value;
    }
    return { contentType, boundary, json };
  }
  // Strict UTF-8 and bounded nesting (src/http/jsonBody.ts): a stranger's body is refused here
  // rather than overflowing the stack of the walks after it.
  return { contentType, boundary, json: parseJsonObject(request.body) };
}

/** 404 `not_found` when no provider relays the path. */
export function checkPath(providers: RuntimeProvider[], path: string): void {
  if (!providers.some((p) => path in p.kind.paths)) {
    throw new SvcError('not_found', { message: `This seller does not relay ${path}.` });
  }
}

/** The provider offering the body's model on `path`: 400 without a model, 404 `service_not_offered`. */
export function routeOf(providers: RuntimeProvider[], path: string, body: Json): SellerRoute {
  const model = body.model;
  if (typeof model !== 'string' || model === '') {
    throw new SvcError('invalid_request', {
      message: 'The request names no "model".',
      details: { param: 'model' },
    });
  }
  const provider = providers.find((p) => path in p.kind.paths && model in p.config.services);
  if (!provider) throw new SvcError('service_not_offered', { details: { model } });
  return {
    provider,
    model,
    service: provider.config.services[model]!,
    protocol: provider.kind.paths[path]!,
  };
}
