/**
 * Handles one buyer request on the seller: route by path (allow-list) and model, enforce the
 * provider's concurrency (429 + Retry-After), admit payment, relay upstream (or answer as the
 * demo), meter usage on the way back and put usage and cost in the trailer.
 */
import { randomUUID } from 'node:crypto';
import type { ProviderConfig } from '../config/index.js';
import { errorStyleForPath, renderError, SvcError, toSvcError } from '../errors/index.js';
import { parseJsonBody } from '../formats/index.js';
import type { PeerId } from '../identity/index.js';
import type { Logger } from '../log/index.js';
import { costOfUsage, maxCostOfRequest, type TokenPricing, toPriceMicro } from '../money/index.js';
import type {
  ApiProtocol,
  InboundRequest,
  OutboundReply,
  SellerTrailer,
} from '../network/index.js';
import { demoAnswer } from './demo.js';
import { handleMedia } from './media/handleMedia.js';
import { providerName } from './metadata.js';
import { multipartBoundary, multipartField, replaceMultipartField } from './multipart.js';
import type { SellerOffer, SellerPayments } from './payments.js';
import { PROVIDER_KINDS, type ProviderKind } from './providers.js';
import { type RelayInput, relay } from './relay.js';
import { type MeterResult, UsageMeter } from './usage.js';

/** A configured provider with its key resolved and its live load. */
export interface RuntimeProvider {
  config: ProviderConfig;
  kind: ProviderKind;
  name: string;
  baseUrl: string | undefined;
  apiKey: string | undefined;
  /** Shared with in-flight requests, so a config update keeps the count. */
  load: { active: number };
}

export interface HandlerDeps {
  sellerPeerId: PeerId;
  providers: () => RuntimeProvider[];
  payments: SellerPayments;
  /** Called whenever a provider's load changes. */
  onLoadChange: () => void;
  logger: Logger;
}

type Json = Record<string, unknown>;
const encoder = new TextEncoder();
const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

function errorReply(error: SvcError, path: string): OutboundReply {
  return {
    status: error.status,
    headers: { 'content-type': 'application/json', ...(error.headers ?? {}) },
    body: encoder.encode(JSON.stringify(renderError(error, errorStyleForPath(path)))),
    trailer: () => ({ error: error.code }),
  };
}

function requestedMaxOutput(body: Json): number | undefined {
  for (const field of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const value = body[field];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  }
  return undefined;
}

/** Creates the request handler for `serveRequests`. */
export function createSellerHandler(
  deps: HandlerDeps,
): (request: InboundRequest) => Promise<OutboundReply> {
  return async (request) => {
    try {
      return await handle(deps, request);
    } catch (error) {
      const svcError = toSvcError(error);
      if (svcError.code === 'internal_error')
        deps.logger.error({ err: String(error) }, 'seller handler failed');
      return errorReply(svcError, request.path);
    }
  };
}

async function handle(deps: HandlerDeps, request: InboundRequest): Promise<OutboundReply> {
  if (request.method !== 'POST') throw new SvcError('method_not_allowed');
  const media = await handleMedia(deps, request);
  if (media) return media;
  const providers = deps.providers();
  if (!providers.some((p) => request.path in p.kind.paths)) {
    throw new SvcError('not_found', { message: `This seller does not relay ${request.path}.` });
  }
  const contentType = Object.entries(request.headers).find(
    ([name]) => name.toLowerCase() === 'content-type',
  )?.[1];
  const boundary = multipartBoundary(contentType);
  let body: Json;
  if (boundary !== undefined) {
    // Image edits: multipart; only the model field is read (and rewritten below).
    const model = multipartField(request.body, boundary, 'model');
    body = model !== undefined ? { model } : {};
  } else {
    // Strict UTF-8 and bounded nesting (src/formats/parseJsonBody.ts): a stranger's body is
    // refused here rather than overflowing the stack of the walks after it.
    const parsed = parseJsonBody(request.body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new SvcError('invalid_request', { message: 'The request body must be a JSON object.' });
    body = parsed as Json;
  }
  const model = body.model;
  if (typeof model !== 'string' || model === '') {
    throw new SvcError('invalid_request', {
      message: 'The request names no "model".',
      details: { param: 'model' },
    });
  }
  const provider = providers.find(
    (p) => request.path in p.kind.paths && model in p.config.services,
  );
  if (!provider) throw new SvcError('service_not_offered', { details: { model } });
  const protocol = provider.kind.paths[request.path] as ApiProtocol;
  const service = provider.config.services[model]!;
  const pricing: TokenPricing = service.pricing ?? provider.config.defaultPricing;

  if (provider.load.active >= provider.config.maxConcurrency) {
    throw new SvcError('seller_overloaded', { headers: { 'retry-after': '1' } });
  }
  const requestId =
    typeof request.payment?.requestId === 'string' ? request.payment.requestId : randomUUID();
  const offer: SellerOffer = {
    sellerPeerId: deps.sellerPeerId,
    provider: provider.name,
    serviceId: model,
    pricing,
  };
  const maxOutput =
    requestedMaxOutput(body) ?? service.capabilities?.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const price = toPriceMicro(pricing);
  const maxCost = maxCostOfRequest(Math.ceil(request.body.byteLength / 2), maxOutput, price);
  const context = { requestId, buyerPeerId: request.peerId };
  await deps.payments.admit(request.payment, offer, maxCost, context);

  provider.load.active++;
  deps.onLoadChange();
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    provider.load.active--;
    deps.onLoadChange();
  };

  // A request that delivers nothing frees what admit reserved for it.
  const unbilled = () => {
    void deps.payments
      .record(requestId, { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 }, 0n, {
        ...context,
        offer,
        ...(request.payment ? { payment: request.payment } : {}),
      })
      .catch(() => undefined);
  };

  const finishTrailer = async (result: MeterResult, bodyError?: Error): Promise<SellerTrailer> => {
    release();
    const trailer: SellerTrailer = {};
    if (result.usage) {
      const costMicro = costOfUsage(result.usage, price);
      trailer.usage = result.usage;
      trailer.costMicroUsd = costMicro.toString();
      await deps.payments
        .record(requestId, result.usage, costMicro, {
          ...context,
          offer,
          ...(request.payment ? { payment: request.payment } : {}),
        })
        .catch((error: unknown) =>
          deps.logger.warn({ err: String(error), requestId }, 'recording usage failed'),
        );
    } else unbilled();
    const error = bodyError?.message ?? result.error;
    if (error !== undefined) trailer.error = `upstream_error: ${error}`;
    return trailer;
  };

  try {
    if (provider.config.type === 'demo') {
      const answer = await demoAnswer(protocol, model, body, request.body.byteLength);
      return {
        status: answer.status,
        headers: { 'content-type': answer.contentType },
        body:
          body.stream === true
            ? (async function* () {
                for (const part of answer.parts) yield encoder.encode(part);
              })()
            : encoder.encode(answer.parts.join('')),
        trailer: (bodyError) => finishTrailer({ usage: answer.usage, complete: true }, bodyError),
      };
    }
    const upstreamModel = service.upstreamModel ?? model;
    let upstreamBody: RelayInput['body'];
    if (boundary !== undefined) {
      upstreamBody = {
        raw: replaceMultipartField(request.body, boundary, 'model', upstreamModel),
        contentType: contentType ?? '',
      };
    } else {
      const json: Json = { ...body, model: upstreamModel };
      if (protocol === 'openai-chat-completions' && body.stream === true) {
        json.stream_options = {
          ...((body.stream_options as Json | undefined) ?? {}),
          include_usage: true,
        };
      }
      upstreamBody = json;
    }
    const result = await relay({
      kind: provider.kind,
      baseUrl: provider.baseUrl ?? '',
      apiKey: provider.apiKey,
      path: request.path,
      protocol,
      headers: request.headers,
      body: upstreamBody,
      signal: request.signal,
    });
    const meter = new UsageMeter(protocol, result.streaming);
    if (result.status < 200 || result.status >= 300) {
      // The buyer's own mistake (400, 404, 422...): passed through, nothing billed.
      release();
      unbilled();
      return {
        status: result.status,
        headers: result.headers,
        body: result.body,
        trailer: () => ({}),
      };
    }
    const source = result.body;
    if (source instanceof Uint8Array) {
      // Whole answer known: metered now, sent in one go (the load is released in the trailer).
      meter.push(source);
      return {
        status: result.status,
        headers: result.headers,
        body: source,
        trailer: (bodyError) => finishTrailer(meter.finish(), bodyError),
      };
    }
    return {
      status: result.status,
      headers: result.headers,
      body: (async function* () {
        try {
          for await (const chunk of source) {
            meter.push(chunk);
            yield chunk;
          }
        } finally {
          release();
        }
      })(),
      trailer: (bodyError) => finishTrailer(meter.finish(), bodyError),
    };
  } catch (error) {
    release();
    unbilled();
    throw error;
  }
}

export { PROVIDER_KINDS, providerName };
