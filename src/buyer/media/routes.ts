/**
 * The buyer's media routes (spec 4.2; decisions 090-093): image generation (JSON) and edits
 * (multipart, forwarded byte for byte), video jobs in two formats, and `/v1/systemone`
 * decision questions. Never translated: only sellers speaking the route's format qualify.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ModelType } from '../../catalog/index.js';
import { SvcError, toSvcError } from '../../errors/index.js';
import { header, parseJsonRequest, readBody } from '../../http/index.js';
import {
  costOfUsage,
  formatUsd,
  maxCostOfRequest,
  parseUsd,
  type TokenUsage,
  unitPriceMicro,
  unitsOf,
  unitUsage,
  usdNumberToMicro,
} from '../../money/index.js';
import type { ApiProtocol } from '../../network/index.js';
import {
  narrowPreferences,
  parseGatewayPolicy,
  parsePinnedModel,
  passThroughProtocol,
  pinPreferences,
  type RoutingTarget,
  resolveTarget,
  selectRoute,
} from '../../routing/index.js';
import type { BuyerService } from '../BuyerService.js';
import { finishRequest, type ProxyContext, ZERO_USAGE } from '../context.js';
import { headersForSeller } from '../http.js';
import { failRequest } from '../proxy.js';
import { multipartBoundary, multipartField } from './multipart.js';
import { type MediaCall, sendMedia } from './send.js';
import { checkVideoCeiling, VideoJobs, validateQueueBody, videoJobsPath } from './video.js';

type Kind = 'image' | 'image-edit' | 'video-queue' | 'video-retrieve' | 'decision';

interface MediaRoute {
  name: string;
  kind: Kind;
  type: ModelType;
  protocol: ApiProtocol;
}

const MEDIA_ROUTES: Record<string, MediaRoute> = {
  '/v1/images/generations': {
    name: 'images_generations',
    kind: 'image',
    type: 'image',
    protocol: 'openai-images',
  },
  '/v1/images/edits': {
    name: 'images_edits',
    kind: 'image-edit',
    type: 'image',
    protocol: 'openai-images',
  },
  '/api/v1/video/queue': {
    name: 'video_queue',
    kind: 'video-queue',
    type: 'video',
    protocol: 'video-queue',
  },
  '/api/v1/video/retrieve': {
    name: 'video_retrieve',
    kind: 'video-retrieve',
    type: 'video',
    protocol: 'video-queue',
  },
  '/fal/v1/video/queue': {
    name: 'fal_video_queue',
    kind: 'video-queue',
    type: 'video',
    protocol: 'fal-video',
  },
  '/fal/v1/video/retrieve': {
    name: 'fal_video_retrieve',
    kind: 'video-retrieve',
    type: 'video',
    protocol: 'fal-video',
  },
  '/v1/systemone': { name: 'systemone', kind: 'decision', type: 'decision', protocol: 'systemone' },
};

const JOBS = new WeakMap<BuyerService, VideoJobs>();
/** Output tokens assumed for the payment bound of a decision. */
const DECISION_MAX_OUTPUT = 16;

function jobsOf(service: BuyerService): VideoJobs {
  const jobs = JOBS.get(service) ?? new VideoJobs(videoJobsPath(service.deps.dataDir));
  JOBS.set(service, jobs);
  return jobs;
}

/** Handles `path` when it is a media route; false otherwise. */
export async function handleMediaRoute(
  service: BuyerService,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  method: string,
): Promise<boolean> {
  const route = MEDIA_ROUTES[path];
  if (!route) return false;
  if (method !== 'POST') throw new SvcError('method_not_allowed');
  const access = service.controlSecret.check(
    header(req.headers, 'x-svc-buyer-identity'),
    header(req.headers, 'x-svc-gateway-auth'),
  );
  const clientAbort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) clientAbort.abort(new Error('client closed the connection'));
  });
  const ctx: ProxyContext = {
    service,
    req,
    res,
    route: { name: route.name, protocol: route.protocol, style: 'openai' },
    requestId:
      (access.authenticated ? header(req.headers, 'x-svc-request-id') : undefined) ??
      `req_${randomBytes(12).toString('hex')}`,
    startedAt: service.deps.clock(),
    body: {},
    bodyBytes: 0,
    access,
    clientAbort,
    attempts: [],
  };
  try {
    await serve(ctx, route, path);
  } catch (error) {
    const svcError = toSvcError(error);
    if (svcError.code === 'internal_error') {
      service.deps.logger.error({ err: error }, 'media request failed');
    }
    failRequest(ctx, svcError);
    if (svcError.headers?.connection === 'close') req.destroy();
  }
  return true;
}

async function serve(ctx: ProxyContext, route: MediaRoute, path: string): Promise<void> {
  const { service, req } = ctx;
  const { deps } = service;
  const raw = await readBody(req, deps.config.bodyLimitBytes, 'buyer.bodyLimitBytes');
  ctx.bodyBytes = raw.length;
  const contentType = header(req.headers, 'content-type');
  let model: string | undefined;
  if (route.kind === 'image-edit') {
    const boundary = multipartBoundary(contentType);
    if (!boundary) {
      throw new SvcError('unsupported_media_type', {
        message: 'Send /v1/images/edits as multipart/form-data.',
      });
    }
    model = multipartField(raw, boundary, 'model');
    const n = Number(multipartField(raw, boundary, 'n') ?? '1');
    ctx.body = { ...(model !== undefined ? { model } : {}), n: Number.isInteger(n) ? n : 1 };
    if (model && parsePinnedModel(model)) {
      throw new SvcError('invalid_request', {
        message:
          'Multipart image edits are forwarded unchanged, so the model field cannot carry a pin. Send the plain model and pin with the x-svc-pin-peer header.',
        details: { param: 'model' },
      });
    }
  } else {
    ctx.body = parseJsonRequest(req, raw);
    if (ctx.body.model !== undefined && typeof ctx.body.model !== 'string') {
      throw new SvcError('invalid_request', {
        message: '"model" must be a string.',
        details: { param: 'model' },
      });
    }
    model = ctx.body.model as string | undefined;
  }
  if (ctx.access.authenticated) {
    const policy = header(req.headers, 'x-svc-routing-policy');
    if (policy) ctx.policy = parseGatewayPolicy(policy);
    const maxCost = header(req.headers, 'x-svc-max-cost-usd');
    if (maxCost) {
      try {
        ctx.maxCostMicro = parseUsd(maxCost);
      } catch {
        throw new SvcError('invalid_request', {
          message: 'x-svc-max-cost-usd must be a USD amount like "0.123456".',
        });
      }
    }
  }

  const format = route.protocol;
  const jobs = jobsOf(service);
  let target: RoutingTarget;
  if (route.kind === 'video-retrieve') {
    const queueId = ctx.body.queue_id;
    if (typeof queueId !== 'string' || queueId === '') {
      throw new SvcError('invalid_request', {
        message: '"queue_id" must be a string.',
        details: { param: 'queue_id' },
      });
    }
    const job = jobs.get(format, queueId);
    if (!job) throw new SvcError('video_job_not_found', { details: { queueId } });
    target = {
      kind: 'pinned' as const,
      peerId: job.peerId,
      model: job.serviceId,
      source: 'model' as const,
    };
  } else {
    const pinHeader = header(req.headers, 'x-svc-pin-peer');
    target = resolveTarget({ model, ...(pinHeader ? { pinHeader } : {}), presets: {} }).target;
  }
  if (route.kind === 'video-queue') {
    validateQueueBody(ctx.body, format === 'video-queue');
    checkVideoCeiling(service.offers(), target);
  }
  const own = service.ownPreferences;
  const preferences =
    target.kind === 'pinned'
      ? pinPreferences(own, ctx.policy)
      : ctx.policy
        ? narrowPreferences(own, ctx.policy)
        : own;
  const plan = selectRoute({
    target,
    routeType: route.type,
    clientProtocol: route.protocol,
    chooseProtocol: passThroughProtocol,
    index: service.offers(),
    preferences,
    reputation: deps.reputation,
    health: service.health,
    bodyBytes: ctx.bodyBytes,
    maxCandidates: deps.config.maxAttempts,
  });
  const units = route.type === 'image' && typeof ctx.body.n === 'number' ? ctx.body.n : 1;
  const build = (candidate: (typeof plan.candidates)[number]): MediaCall => {
    const { offer } = candidate;
    const headers = headersForSeller(req);
    let body: Uint8Array;
    if (route.kind === 'image-edit') {
      headers['content-type'] = contentType ?? '';
      body = raw;
    } else {
      body = new TextEncoder().encode(JSON.stringify({ ...ctx.body, model: offer.serviceId }));
    }
    const unitUsd =
      route.type === 'image'
        ? offer.unitBilling?.imageUsd
        : route.type === 'video'
          ? offer.unitBilling?.videoUsd
          : undefined;
    if (unitUsd !== undefined || route.type === 'video') {
      const price = unitPriceMicro(usdNumberToMicro(unitUsd ?? 0));
      if (route.kind === 'video-queue') return { path, body, headers, price };
      return { path, body, headers, price, maxCostMicro: costOfUsage(unitUsage(units), price) };
    }
    // Token-priced (decisions; image services without a per-image price).
    const maxOut =
      route.type === 'decision'
        ? DECISION_MAX_OUTPUT
        : (offer.capabilities?.maxOutputTokens ?? 4096);
    return {
      path,
      body,
      headers,
      price: offer.price,
      maxCostMicro: maxCostOfRequest(Math.ceil(body.byteLength / 2), maxOut, offer.price),
    };
  };
  const answer = await sendMedia(ctx, plan, build);
  const { candidate } = answer;
  const { offer } = candidate;
  const contentTypeOut = answer.headers['content-type'] ?? 'application/json';
  let json: Record<string, unknown> | undefined;
  if (contentTypeOut.includes('json')) {
    try {
      json = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
    } catch {
      json = undefined;
    }
  }
  // The buyer's own count of what it received.
  let usage: TokenUsage = ZERO_USAGE;
  if (route.type === 'image' && offer.unitBilling?.imageUsd !== undefined) {
    usage = unitUsage(Array.isArray(json?.data) ? Math.min(json.data.length, units) : 0);
  } else if (route.kind === 'video-retrieve') {
    usage = contentTypeOut.startsWith('video/') ? unitUsage(1) : ZERO_USAGE;
  } else if (answer.trailer?.usage) {
    usage = answer.trailer.usage;
  }
  if (route.kind === 'video-queue' && typeof json?.queue_id === 'string') {
    jobs.remember(format, json.queue_id, {
      peerId: offer.peerId,
      serviceId: offer.serviceId,
      queuedAt: deps.clock(),
    });
  }
  const unitBilled =
    (route.type === 'image' && offer.unitBilling?.imageUsd !== undefined) || route.type === 'video';
  // Records show units (images, videos) as output "tokens"; payments see billing tokens.
  const recorded = unitBilled ? { ...ZERO_USAGE, outputTokens: unitsOf(usage) } : usage;
  const cost = costOfUsage(usage, answer.price);
  const costUsd = formatUsd(cost);
  ctx.res.writeHead(answer.status, {
    'content-type': contentTypeOut,
    'content-length': answer.body.length,
    'x-svc-request-id': ctx.requestId,
    'x-svc-peer-id': offer.peerId,
    'x-svc-provider': offer.provider,
    'x-svc-service': offer.serviceId,
    ...(offer.unitBilling?.imageUsd !== undefined
      ? { 'x-svc-image-usd': String(offer.unitBilling.imageUsd) }
      : {}),
    ...(offer.unitBilling?.videoUsd !== undefined
      ? { 'x-svc-video-usd': String(offer.unitBilling.videoUsd) }
      : {}),
    'x-svc-estimated-cost-usd': costUsd,
    'x-svc-attempts': ctx.attempts.join(', ') || 'none',
    'x-svc-latency-ms': String(deps.clock() - ctx.startedAt),
  });
  ctx.res.end(answer.body);
  service.metrics.spend.inc(Number(cost));
  finishRequest(ctx, {
    status: answer.status,
    completed: true,
    streamed: false,
    peerId: offer.peerId,
    provider: offer.provider,
    serviceId: offer.serviceId,
    model: offer.modelName,
    usage: recorded,
    costUsd,
  });
  if (answer.paid) {
    await deps.payments
      .complete({
        requestId: ctx.requestId,
        peerId: offer.peerId,
        claimed: answer.trailer,
        estimatedUsage: usage,
        price: answer.price,
        units: true,
      })
      .catch((error: unknown) =>
        deps.logger.warn({ err: error, requestId: ctx.requestId }, 'payment completion failed'),
      );
  }
}
