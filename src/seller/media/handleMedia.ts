/**
 * Seller side of the media routes (decisions 090, 092): images billed per image (`imageUsd`), video
 * jobs (queue free, the seller paid once when it delivers the mp4, `videoUsd`) and decision
 * questions (`systemone`, token-priced; a demo answer without a baseUrl). Bodies are relayed
 * as-is except the model, which becomes the upstream model (multipart edits included).
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import {
  costOfUsage,
  type MicroUsd,
  maxCostOfRequest,
  type TokenPriceMicro,
  type TokenPricing,
  type TokenUsage,
  toPriceMicro,
  unitPriceMicro,
  unitPricing,
  unitUsage,
  usdNumberToMicro,
} from '../../money/index.js';
import type { InboundRequest, OutboundReply, SellerTrailer } from '../../network/index.js';
import type { HandlerDeps, RuntimeProvider } from '../handler.js';
import { multipartBoundary, multipartField, replaceMultipartField } from '../multipart.js';
import type { SellerOffer } from '../payments.js';
import { upstreamUrl } from '../relay.js';
import { demoDecision, parseSystemone } from './decision.js';
import { relayRaw } from './relayRaw.js';

type Json = Record<string, unknown>;
const MEDIA_PATHS = new Set([
  '/v1/images/generations',
  '/v1/images/edits',
  '/api/v1/video/queue',
  '/api/v1/video/retrieve',
  '/fal/v1/video/queue',
  '/fal/v1/video/retrieve',
  '/v1/systemone',
]);
const MAX_IMAGES = 10;
const encoder = new TextEncoder();

/** Video jobs already paid for, per handler (a second retrieve of a done job is free). */
/** Keys billed once, for payments that do not persist them (free and development sellers). */
const PAID_JOBS = new WeakMap<HandlerDeps, Set<string>>();

function claimOnce(deps: HandlerDeps, key: string): boolean {
  if (deps.payments.claimOnce) return deps.payments.claimOnce(key);
  const paid = PAID_JOBS.get(deps) ?? new Set<string>();
  PAID_JOBS.set(deps, paid);
  if (paid.has(key)) return false;
  paid.add(key);
  return true;
}

function parseJson(body: Uint8Array): Json {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Json;
  } catch {
    // below
  }
  throw new SvcError('invalid_json');
}

function imageCount(value: unknown): number {
  if (value === undefined) return 1;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_IMAGES) {
    throw new SvcError('invalid_request', {
      message: `"n" must be an integer from 1 to ${MAX_IMAGES}.`,
      details: { param: 'n' },
    });
  }
  return n;
}

interface Billing {
  pricing: TokenPricing;
  price: TokenPriceMicro;
  /** Bound admitted before relaying; undefined: not admitted (video queue). */
  maxCost?: MicroUsd;
}

/**
 * Answers a media request, or returns undefined when the generic handler should (not a media
 * path, or an image service without a per-image price: billed by tokens as before).
 */
export async function handleMedia(
  deps: HandlerDeps,
  request: InboundRequest,
): Promise<OutboundReply | undefined> {
  if (!MEDIA_PATHS.has(request.path) || request.method !== 'POST') return undefined;
  const contentType =
    Object.entries(request.headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ??
    'application/json';
  const boundary = multipartBoundary(contentType);
  const body: Json =
    boundary !== undefined
      ? {
          model: multipartField(request.body, boundary, 'model'),
          n: multipartField(request.body, boundary, 'n'),
        }
      : parseJson(request.body);
  const model = body.model;
  if (typeof model !== 'string' || model === '') {
    throw new SvcError('invalid_request', {
      message: 'The request names no "model".',
      details: { param: 'model' },
    });
  }
  const provider: RuntimeProvider | undefined = deps
    .providers()
    .find((p) => request.path in p.kind.paths && model in p.config.services);
  if (!provider) throw new SvcError('service_not_offered', { details: { model } });
  const service = provider.config.services[model]!;
  const isImage = provider.config.type === 'openai-images';
  const isVideo = provider.config.type === 'video';
  if (isImage && service.imageUsd === undefined) return undefined;

  let billing: Billing;
  const units = isImage ? imageCount(body.n) : 1;
  if (isImage || isVideo) {
    const unitUsd = (isImage ? service.imageUsd : service.videoUsd) ?? 0;
    const price = unitPriceMicro(usdNumberToMicro(unitUsd));
    const retrieve = request.path.endsWith('/retrieve');
    billing = {
      pricing: unitPricing(unitUsd),
      price,
      ...(isImage || retrieve ? { maxCost: costOfUsage(unitUsage(units), price) } : {}),
    };
  } else {
    const pricing = service.pricing ?? provider.config.defaultPricing;
    const price = toPriceMicro(pricing);
    billing = {
      pricing,
      price,
      maxCost: maxCostOfRequest(Math.ceil(request.body.byteLength / 2), 16, price),
    };
  }
  if (provider.load.active >= provider.config.maxConcurrency) {
    throw new SvcError('seller_overloaded', { headers: { 'retry-after': '1' } });
  }
  const requestId =
    typeof request.payment?.requestId === 'string' ? request.payment.requestId : randomUUID();
  const offer: SellerOffer = {
    sellerPeerId: deps.sellerPeerId,
    provider: provider.name,
    serviceId: model,
    pricing: billing.pricing,
  };
  const context = { requestId, buyerPeerId: request.peerId };
  if (billing.maxCost !== undefined) {
    await deps.payments.admit(request.payment, offer, billing.maxCost, context);
  }

  const bill = async (usage: TokenUsage): Promise<SellerTrailer> => {
    const costMicro = costOfUsage(usage, billing.price);
    await deps.payments
      .record(requestId, usage, costMicro, {
        ...context,
        offer,
        ...(request.payment ? { payment: request.payment } : {}),
      })
      .catch((error: unknown) =>
        deps.logger.warn({ err: String(error), requestId }, 'recording usage failed'),
      );
    return { usage, costMicroUsd: costMicro.toString() };
  };

  // An admitted request holds part of the channel lock until it is recorded: one that bills
  // nothing (a pending poll, an upstream 4xx, a failure) is recorded at zero to release it.
  const admitted = billing.maxCost !== undefined;
  const nothing = async (): Promise<SellerTrailer> => {
    if (admitted) await bill(unitUsage(0));
    return {};
  };

  provider.load.active++;
  deps.onLoadChange();
  try {
    const upstreamModel = service.upstreamModel ?? model;
    if (provider.config.type === 'systemone' && provider.baseUrl === undefined) {
      const answer = demoDecision(parseSystemone(body), model);
      const usage = answer.usage as { input_tokens: number; output_tokens: number };
      const tokens = {
        inputTokens: usage.input_tokens,
        cachedInputTokens: 0,
        outputTokens: usage.output_tokens,
      };
      return {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: encoder.encode(JSON.stringify(answer)),
        trailer: () => bill(tokens),
      };
    }
    const upstreamBody =
      boundary !== undefined
        ? replaceMultipartField(request.body, boundary, 'model', upstreamModel)
        : encoder.encode(JSON.stringify({ ...body, model: upstreamModel }));
    const url = isVideo
      ? `${(provider.baseUrl ?? '').replace(/\/+$/, '')}${request.path}`
      : upstreamUrl(provider.baseUrl ?? '', request.path);
    const result = await relayRaw({
      kind: provider.kind,
      url,
      apiKey: provider.apiKey,
      headers: request.headers,
      body: upstreamBody,
      contentType,
      signal: request.signal,
    });
    const reply = (trailer: () => SellerTrailer | Promise<SellerTrailer>): OutboundReply => ({
      status: result.status,
      headers: { ...result.headers, 'content-type': result.contentType },
      body: result.body,
      trailer,
    });
    if (result.status < 200 || result.status >= 300) return reply(nothing);
    if (isImage) {
      let delivered = 0;
      try {
        const data = (JSON.parse(result.body.toString('utf8')) as Json).data;
        delivered = Array.isArray(data) ? Math.min(data.length, units) : 0;
      } catch {
        throw new SvcError('upstream_error', {
          message: "The seller's upstream API returned malformed JSON.",
        });
      }
      return reply(() => bill(unitUsage(delivered)));
    }
    if (isVideo) {
      const queueId = typeof body.queue_id === 'string' ? body.queue_id : undefined;
      const done = result.contentType.startsWith('video/') && queueId !== undefined;
      if (!done) return reply(nothing);
      const key = `video|${request.peerId}|${model}|${queueId}`;
      if (!claimOnce(deps, key)) return reply(nothing);
      return reply(() => bill(unitUsage(1)));
    }
    const json = JSON.parse(result.body.toString('utf8')) as Json;
    const usage = json.usage as { input_tokens?: number; output_tokens?: number } | undefined;
    return reply(() =>
      bill({
        inputTokens: usage?.input_tokens ?? 0,
        cachedInputTokens: 0,
        outputTokens: usage?.output_tokens ?? 0,
      }),
    );
  } catch (error) {
    await nothing();
    throw error;
  } finally {
    provider.load.active--;
    deps.onLoadChange();
  }
}
