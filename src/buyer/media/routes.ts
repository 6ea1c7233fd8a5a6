/**
 * The buyer's media routes (docs/decisions/090-media-routes.md to 093): image generation (JSON)
 * and edits (multipart, forwarded byte for byte), video jobs in two formats, and `/v1/systemone`
 * decision questions. Never translated: only sellers speaking the route's format qualify. They
 * go through the same attempt, failover and payment path as text (src/buyer/tryCandidates.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError, toSvcError } from '../../errors/index.js';
import { parseJsonRequest, readBody } from '../../http/index.js';
import { headerValue, SVC_HEADER } from '../../protocol/index.js';
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
import { applyGatewayLimits, openProxyContext, type ProxyContext } from '../context.js';
import { failRequest } from '../failRequest.js';
import { effectivePreferences, requestPreferences } from '../proxy.js';
import { tryCandidates } from '../tryCandidates.js';
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
  const ctx = openProxyContext(service, req, res, {
    name: route.name,
    protocol: route.protocol,
    style: 'openai',
  });
  try {
    await serve(ctx, req, route, path);
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

/** Reads the body into `ctx.body` (multipart edits: only model and n); the model asked for. */
function readMediaBody(
  ctx: ProxyContext,
  route: MediaRoute,
  raw: Buffer,
  contentType: string | undefined,
): string | undefined {
  if (route.kind !== 'image-edit') {
    ctx.body = parseJsonRequest(ctx.req, raw);
    if (ctx.body.model !== undefined && typeof ctx.body.model !== 'string') {
      throw new SvcError('invalid_request', {
        message: '"model" must be a string.',
        details: { param: 'model' },
      });
    }
    return ctx.body.model as string | undefined;
  }
  const boundary = multipartBoundary(contentType);
  if (!boundary) {
    throw new SvcError('unsupported_media_type', {
      message: 'Send /v1/images/edits as multipart/form-data.',
    });
  }
  const model = multipartField(raw, boundary, 'model');
  const n = Number(multipartField(raw, boundary, 'n') ?? '1');
  ctx.body = { ...(model !== undefined ? { model } : {}), n: Number.isInteger(n) ? n : 1 };
  if (model && parsePinnedModel(model)) {
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
    const pinHeader = headerValue(ctx.req.headers, SVC_HEADER.pinPeer);
    return resolveTarget({ model, ...(pinHeader ? { pinHeader } : {}), presets: {} }).target;
  }
  const queueId = ctx.body.queue_id;
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
      effectivePreferences(service.ownPreferences, target, ctx.policy),
    ),
    reputation: service.deps.reputation,
    health: service.health,
    speed: service.speed,
    audits: service.audits,
    bodyBytes: ctx.bodyBytes,
    maxCandidates: service.deps.config.maxAttempts,
  });
}

async function serve(
  ctx: ProxyContext,
  req: IncomingMessage,
  route: MediaRoute,
  path: string,
): Promise<void> {
  const { service } = ctx;
  const raw = await readBody(req, service.deps.config.bodyLimitBytes, 'buyer.bodyLimitBytes');
  ctx.bodyBytes = raw.length;
  const contentType = headerValue(req.headers, 'content-type');
  const model = readMediaBody(ctx, route, raw, contentType);
  applyGatewayLimits(ctx);
  const jobs = jobsOf(service);
  const target = targetOf(ctx, route, model, jobs);
  if (route.kind === 'video-queue') {
    validateQueueBody(ctx.body, route.protocol === 'video-queue');
    checkVideoCeiling(service.offers(), target);
  }
  const plan = planOf(ctx, route, target, model);
  const units = route.type === 'image' && typeof ctx.body.n === 'number' ? ctx.body.n : 1;
  const request: MediaRequest = { route, path, raw, contentType, units };
  await tryCandidates(
    ctx,
    plan,
    (candidate) => mediaCall(ctx, request, candidate),
    (candidate, ok) => deliverMedia(ctx, request, jobs, candidate, ok),
  );
}
