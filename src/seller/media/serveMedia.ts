/**
 * The media variant of the seller pipeline (decisions 090, 092): images billed per image
 * (`imageUsd`), video jobs (queue free, the seller paid once when it delivers the mp4, `videoUsd`)
 * and decision questions (`systemone`, token-priced; a demo answer without a baseUrl). Bodies are
 * relayed as they are except the model, which becomes the upstream model (multipart edits
 * included). Answers are read whole: they may be binary (`video/mp4`).
 */
import { SvcError } from '../../errors/index.js';
import {
  costOfUsage,
  maxCostOfRequest,
  type TokenUsage,
  toPriceMicro,
  unitPriceMicro,
  unitPricing,
  unitUsage,
  usdNumberToMicro,
} from '../../money/index.js';
import type { InboundRequest, OutboundReply, SellerTrailer } from '../../network/index.js';
import type { Admitted, Billing } from '../pipeline/admission.js';
import type { HandlerDeps } from '../pipeline/deps.js';
import type { SellerBody, SellerRoute } from '../pipeline/route.js';
import {
  callUpstream,
  readUpstreamBody,
  upstreamJson,
  upstreamPayload,
  upstreamUrl,
} from '../pipeline/upstream.js';
import { demoDecision, parseSystemone } from './decision.js';

export type MediaKind = 'image' | 'video' | 'decision';

const MAX_IMAGES = 10;
/** Largest upstream answer buffered (a short video fits easily). */
const MAX_UPSTREAM_BYTES = 256 * 1024 * 1024;
/** Output tokens a decision may cost at most (an answer is one option). */
const MAX_DECISION_OUTPUT_TOKENS = 16;
const encoder = new TextEncoder();

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

/** Which media a route serves; undefined: a text request (an image service without `imageUsd` is billed by tokens). */
export function mediaKindOf(route: SellerRoute): MediaKind | undefined {
  const type = route.provider.config.type;
  if (type === 'openai-images') return route.service.imageUsd !== undefined ? 'image' : undefined;
  if (type === 'video') return 'video';
  if (type === 'systemone') return 'decision';
  return undefined;
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

/** Per-unit pricing for images and videos (a video queue call is free: not admitted), tokens for decisions. */
export function mediaBilling(
  request: InboundRequest,
  body: SellerBody,
  route: SellerRoute,
  kind: MediaKind,
): Billing {
  if (kind === 'decision') {
    const pricing = route.service.pricing ?? route.provider.config.defaultPricing;
    const price = toPriceMicro(pricing);
    const inputBound = Math.ceil(request.body.byteLength / 2);
    return {
      pricing,
      price,
      maxCost: maxCostOfRequest(inputBound, MAX_DECISION_OUTPUT_TOKENS, price),
    };
  }
  const unitUsd = (kind === 'image' ? route.service.imageUsd : route.service.videoUsd) ?? 0;
  const unitMicroUsd = usdNumberToMicro(unitUsd);
  const price = unitPriceMicro(unitMicroUsd);
  const units = kind === 'image' ? imageCount(body.json.n) : 1;
  const admitted = kind === 'image' || request.path.endsWith('/retrieve');
  return {
    pricing: unitPricing(unitUsd),
    price,
    unitMicroUsd,
    ...(admitted ? { maxCost: costOfUsage(unitUsage(units), price) } : {}),
  };
}

function demoDecisionReply({ body, route, admission }: Admitted): OutboundReply {
  const answer = demoDecision(parseSystemone(body.json), route.model);
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
    trailer: () => admission.bill(tokens),
  };
}

/** What a successful media answer bills: undefined bills nothing. */
function mediaUsage(
  deps: HandlerDeps,
  { request, body, route }: Admitted,
  kind: MediaKind,
  answer: { contentType: string; body: Buffer },
): TokenUsage | undefined {
  if (kind === 'image') {
    const data = upstreamJson(answer.body).data;
    const delivered = Array.isArray(data) ? Math.min(data.length, imageCount(body.json.n)) : 0;
    return unitUsage(delivered);
  }
  if (kind === 'video') {
    const queueId = typeof body.json.queue_id === 'string' ? body.json.queue_id : undefined;
    if (!answer.contentType.startsWith('video/') || queueId === undefined) return undefined;
    if (!claimOnce(deps, `video|${request.peerId}|${route.model}|${queueId}`)) return undefined;
    return unitUsage(1);
  }
  const usage = upstreamJson(answer.body).usage as
    | { input_tokens?: number; output_tokens?: number }
    | undefined;
  return {
    inputTokens: usage?.input_tokens ?? 0,
    cachedInputTokens: 0,
    outputTokens: usage?.output_tokens ?? 0,
  };
}

async function relayMedia(
  deps: HandlerDeps,
  admitted: Admitted,
  kind: MediaKind,
): Promise<OutboundReply> {
  const { request, body, route, admission } = admitted;
  const { provider } = route;
  const contentType = body.contentType ?? 'application/json';
  const answer = await callUpstream({
    kind: provider.kind,
    // Video APIs keep the buyer's whole path (`/api/v1/video/...`) under their base URL.
    url:
      kind === 'video'
        ? `${(provider.baseUrl ?? '').replace(/\/+$/, '')}${request.path}`
        : upstreamUrl(provider.baseUrl ?? '', request.path),
    apiKey: provider.apiKey,
    headers: request.headers,
    body: upstreamPayload(request, body, route),
    contentType,
    signal: request.signal,
  });
  const whole = await readUpstreamBody(answer, MAX_UPSTREAM_BYTES);
  const responseType = answer.contentType || 'application/json';
  const ok = answer.status >= 200 && answer.status < 300;
  const usage = ok
    ? mediaUsage(deps, admitted, kind, { contentType: responseType, body: whole })
    : undefined;
  const trailer = async (): Promise<SellerTrailer> => {
    if (usage) return admission.bill(usage);
    await admission.billNothing();
    return {};
  };
  return {
    status: answer.status,
    headers: { ...answer.headers, 'content-type': responseType },
    body: whole,
    trailer,
  };
}

/** Serves an admitted media request; its slot is freed once the upstream's answer is in. */
export async function serveMedia(
  deps: HandlerDeps,
  admitted: Admitted,
  kind: MediaKind,
): Promise<OutboundReply> {
  try {
    if (kind === 'decision' && admitted.route.provider.baseUrl === undefined) {
      return demoDecisionReply(admitted);
    }
    return await relayMedia(deps, admitted, kind);
  } finally {
    admitted.admission.release();
  }
}
