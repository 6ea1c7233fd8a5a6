/**
 * The buyer's media routes (docs/decisions/090-media-routes.md to 093): image generation (JSON)
 * and edits (multipart, forwarded byte for byte), video jobs in two formats, and `/v1/systemone`
 * decision questions. Never translated: only sellers speaking the route's format qualify. They
 * go through the same attempt, failover and payment path as text (src/buyer/tryCandidates.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../../errors/index.js';
import { parseJsonRequest, readBody } from '../../http/index.js';
import { headerValue } from '../../protocol/index.js';
import {
  parsePinnedModel,
  passThroughProtocol,
  type RoutePlan,
  type RoutingTarget,
  resolveTarget,
  selectRoute,
  splitModelVariant,
} from '../../routing/index.js';
import type { BuyerService } from '../BuyerService.js';
import { openProxyContext, type ProxyContext, type RequestBody } from '../context.js';
import { effectivePreferences, requestPreferences } from '../proxy.js';
import { serveProxied } from '../serveProxied.js';
import { SPARE_CANDIDATES, tryCandidates } from '../tryCandidates.js';
import { deliverMedia } from './deliverMedia.js';
import { type MediaRequest, mediaCall } from './mediaCall.js';
import { MEDIA_ROUTES, type MediaRoute } from './mediaRoutes.js';
import { multipartBoundary, multipartField } from './multipart.js';
import { checkVideoCeiling, VideoJobs, validateQueueBody, videoJobsPath } from './video.js';

const JOBS = new WeakMap<BuyerService, VideoJobs>();

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
  const opened = openProxyContext(service, req, res, {
    name: route.name,
    protocol: route.protocol,
    style: 'openai',
  });
  const contentType = headerValue(req.headers, 'content-type');
  let raw: Buffer = Buffer.alloc(0);
  const failed = await serveProxied(
    opened,
    async () => {
      raw = await readBody(req, service.deps.config.bodyLimitBytes, 'buyer.bodyLimitBytes');
      return readMediaBody(req, route, raw, contentType);
    },
    (ctx) => serve(ctx, { route, path, raw, contentType }),
  );
  if (failed?.headers?.connection === 'close') req.destroy();
  return true;
}

/**
 * The body as the request value holds it (multipart edits: only model and n; their bytes are
 * forwarded as they came). The model is checked after, with the body in the request's record.
 */
function readMediaBody(
  req: IncomingMessage,
  route: MediaRoute,
  raw: Buffer,
  contentType: string | undefined,
): RequestBody {
  if (route.kind !== 'image-edit')
    return { body: parseJsonRequest(req, raw), bodyBytes: raw.length };
  const boundary = multipartBoundary(contentType);
  if (!boundary) {
    throw new SvcError('unsupported_media_type', {
      message: 'Send /v1/images/edits as multipart/form-data.',
    });
  }
  const model = multipartField(raw, boundary, 'model');
  const n = Number(multipartField(raw, boundary, 'n') ?? '1');
  const body = { ...(model !== undefined ? { model } : {}), n: Number.isInteger(n) ? n : 1 };
  return { body, bodyBytes: raw.length };
}

/** The model asked for: a string, and for a multipart edit no pin (its bytes go unchanged). */
function modelOf(ctx: ProxyContext, route: MediaRoute): string | undefined {
  const { model } = ctx.request.body;
  if (model !== undefined && typeof model !== 'string') {
    throw new SvcError('invalid_request', {
      message: '"model" must be a string.',
      details: { param: 'model' },
    });
  }
  if (route.kind === 'image-edit' && model && parsePinnedModel(model)) {
    throw new SvcError('invalid_request', {
      message:
        'Multipart image edits are forwarded unchanged, so the model field cannot carry a pin. Send the plain model and pin with the x-svc-pin-peer header.',
      details: { param: 'model' },
    });
  }
  return model;
}

/** The seller a request goes to: a video retrieve goes back to the seller holding the job. */
function targetOf(
  ctx: ProxyContext,
  route: MediaRoute,
  model: string | undefined,
  jobs: VideoJobs,
): RoutingTarget {
  if (route.kind !== 'video-retrieve') {
    const { pin } = ctx.request.limits;
    return resolveTarget({ model, ...(pin ? { pinHeader: pin } : {}), presets: {} }).target;
  }
  const queueId = ctx.request.body.queue_id;
  if (typeof queueId !== 'string' || queueId === '') {
    throw new SvcError('invalid_request', {
      message: '"queue_id" must be a string.',
      details: { param: 'queue_id' },
    });
  }
  const job = jobs.get(route.protocol, queueId);
  if (!job) throw new SvcError('video_job_not_found', { details: { queueId } });
  return { kind: 'pinned', peerId: job.peerId, model: job.serviceId, source: 'model' };
}

function planOf(
  ctx: ProxyContext,
  route: MediaRoute,
  target: RoutingTarget,
  model: string | undefined,
): RoutePlan {
  const variantSort = model ? splitModelVariant(model).sort : undefined;
  const { service } = ctx;
  return selectRoute({
    target,
    routeType: route.type,
    clientProtocol: route.protocol,
    chooseProtocol: passThroughProtocol,
    index: service.offers(),
    preferences: requestPreferences(
      ctx,
      { target, ...(variantSort ? { variantSort } : {}) },
      effectivePreferences(service.ownPreferences, target, ctx.request.limits.policy),
    ),
    reputation: service.deps.reputation,
    health: service.health,
    speed: service.speed,
    audits: service.audits,
    bodyBytes: ctx.request.bodyBytes,
    maxCandidates: service.deps.config.maxAttempts,
    spareCandidates: SPARE_CANDIDATES,
  });
}

async function serve(ctx: ProxyContext, sent: Omit<MediaRequest, 'units'>): Promise<void> {
  const { service } = ctx;
  const { route } = sent;
  const model = modelOf(ctx, route);
  const jobs = jobsOf(service);
  const target = targetOf(ctx, route, model, jobs);
  const { body } = ctx.request;
  if (route.kind === 'video-queue') {
    validateQueueBody(body, route.protocol === 'video-queue');
    checkVideoCeiling(service.offers(), target);
  }
  const plan = planOf(ctx, route, target, model);
  const units = route.type === 'image' && typeof body.n === 'number' ? body.n : 1;
  const request: MediaRequest = { ...sent, units };
  await tryCandidates(
    ctx,
    plan,
    (candidate) => mediaCall(ctx, request, candidate),
    async (delivery) => {
      await deliverMedia(ctx, request, jobs, delivery);
      return undefined;
    },
  );
}
