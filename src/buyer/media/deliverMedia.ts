/**
 * Writes a media answer (read whole and capped by the shared attempt): the buyer's own count of
 * what it received (images, videos, or tokens for token-priced services), paid before the headers
 * are written, as text answers are (src/buyer/commitCost.ts), so `x-svc-estimated-cost-usd` is
 * what was committed to the seller; the same headers as a text answer (spec 4.5), plus the unit
 * price; the record.
 */
import { formatUsd, type TokenUsage, unitsOf, unitUsage } from '../../money/index.js';
import { encodeUsageHeaders, latencyHeader, SVC_HEADER } from '../../protocol/index.js';
import type { RouteCandidate } from '../../routing/index.js';
import { sellerHeaders, servedBy, trailerOf } from '../answerParts.js';
import type { AttemptOk } from '../attempt.js';
import { commitCost } from '../commitCost.js';
import { finishRequest, type ProxyContext, ZERO_USAGE } from '../context.js';
import { checkReceipt, checkUnpaidReceipt } from '../receiptCheck.js';
import { type MediaRequest, ownTokenCount, unitUsdOf } from './mediaCall.js';
import type { VideoJobs } from './video.js';

function jsonOf(contentType: string, body: Buffer): Record<string, unknown> | undefined {
  if (!contentType.includes('json')) return undefined;
  try {
    const json: unknown = JSON.parse(body.toString('utf8'));
    return json && typeof json === 'object' ? (json as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The buyer's own count of what it received, in billing tokens. A video counts once: on its first
 * delivery; retrieving a delivered job again costs nothing (spec 3.2).
 */
async function ownUsage(
  ctx: ProxyContext,
  request: MediaRequest,
  jobs: VideoJobs,
  {
    unitBilled,
    contentType,
    json,
  }: { unitBilled: boolean; contentType: string; json: Record<string, unknown> | undefined },
): Promise<TokenUsage> {
  if (!unitBilled) return ownTokenCount(ctx, request, json);
  if (request.route.type === 'image') {
    return unitUsage(Array.isArray(json?.data) ? Math.min(json.data.length, request.units) : 0);
  }
  if (request.route.kind === 'video-retrieve' && contentType.startsWith('video/')) {
    const queueId = String(ctx.body.queue_id);
    const first = jobs.claimDelivery(request.route.protocol, queueId, ctx.service.deps.clock());
    return first ? unitUsage(1) : ZERO_USAGE;
  }
  return ZERO_USAGE;
}

function priceHeaders(candidate: RouteCandidate): Record<string, string> {
  const billing = candidate.offer.unitBilling;
  return {
    ...(billing?.imageUsd !== undefined ? { [SVC_HEADER.imageUsd]: String(billing.imageUsd) } : {}),
    ...(billing?.videoUsd !== undefined ? { [SVC_HEADER.videoUsd]: String(billing.videoUsd) } : {}),
  };
}

/** Delivers one media answer. */
export async function deliverMedia(
  ctx: ProxyContext,
  request: MediaRequest,
  jobs: VideoJobs,
  candidate: RouteCandidate,
  ok: AttemptOk,
): Promise<void> {
  ok.detach();
  const { service } = ctx;
  const { offer } = candidate;
  const body = ok.whole ?? Buffer.alloc(0);
  const claimed = await trailerOf(ok);
  const contentType = ok.response.headers['content-type'] ?? 'application/json';
  const json = jsonOf(contentType, body);
  const unitBilled = unitUsdOf(request, candidate) !== undefined;
  const own = await ownUsage(ctx, request, jobs, { unitBilled, contentType, json });
  // Units are billed on the buyer's count; tokens on the seller's report when it has one.
  const usage = unitBilled ? own : (claimed?.usage ?? own);
  if (request.route.kind === 'video-queue' && typeof json?.queue_id === 'string') {
    jobs.remember(request.route.protocol, json.queue_id, {
      peerId: offer.peerId,
      serviceId: offer.serviceId,
      queuedAt: service.deps.clock(),
    });
  }
  // Records and headers show units (images, videos) as output "tokens"; payments see billing tokens.
  const recorded = unitBilled ? { ...ZERO_USAGE, outputTokens: unitsOf(usage) } : usage;
  // A paid answer's receipt is checked before paying (decision 168), an unpaid one's after.
  const receipt = ok.paid ? checkReceipt(ctx, candidate, ok, claimed) : undefined;
  const draft = {
    ...servedBy(candidate, false),
    status: ok.response.status,
    completed: true,
    usage: recorded,
    ...(receipt ? { receipt } : {}),
  };
  const estimate = async () => own;
  const cost = await commitCost(
    ctx,
    candidate,
    ok,
    claimed,
    estimate,
    usage,
    draft,
    false,
    unitBilled,
  );
  const costUsd = formatUsd(cost);
  ctx.res.writeHead(ok.response.status, {
    'content-type': contentType,
    'content-length': body.length,
    ...sellerHeaders(ctx, candidate),
    ...priceHeaders(candidate),
    ...encodeUsageHeaders({
      ...recorded,
      tokenSource: claimed?.usage ? 'usage' : 'estimated',
      estimatedCostUsd: costUsd,
    }),
    ...latencyHeader(service.deps.clock() - ctx.startedAt),
  });
  ctx.res.end(body);
  service.metrics.spend.inc(Number(cost));
  await checkUnpaidReceipt(ctx, candidate, ok, claimed, draft);
  finishRequest(ctx, { ...draft, costUsd });
  service.health.recordSuccess(offer.peerId);
}
