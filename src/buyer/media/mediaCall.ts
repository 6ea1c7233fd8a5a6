/**
 * The seller call of a media request (docs/decisions/091-unit-billing-as-token-price.md): the body
 * (multipart edits forwarded byte for byte), the unit or token price, the payment bound, and the
 * buyer's own token count of a token-priced request (decisions; images without `imageUsd`).
 */
import { SvcError } from '../../errors/index.js';
import {
  costOfUsage,
  formatUsd,
  maxCostOfRequest,
  type TokenUsage,
  unitPriceMicro,
  unitUsage,
  usdNumberToMicro,
} from '../../money/index.js';
import { SVC_HEADER } from '../../protocol/index.js';
import { type RouteCandidate, withoutRoutingFields } from '../../routing/index.js';
import type { SellerCall } from '../attempt.js';
import type { ProxyContext } from '../context.js';
import { headersForSeller } from '../http.js';
import { type AttemptFailure, failure } from '../sellerFailure.js';
import { countTextTokensAsync } from '../tokenCount.js';
import type { MediaRoute } from './mediaRoutes.js';

/** Output tokens assumed for the payment bound of a decision. */
const DECISION_MAX_OUTPUT = 16;
/** Pixels per output token of the highest image quality (4,160 tokens for 1024×1024). */
const PIXELS_PER_IMAGE_TOKEN = 252;
/** The largest image size a token-priced service makes, when the request names none. */
const LARGEST_IMAGE_PIXELS = 1536 * 1024;

/** What the route's request carries, read once. */
export interface MediaRequest {
  route: MediaRoute;
  path: string;
  raw: Uint8Array;
  contentType: string | undefined;
  /** Images asked for (1 for other routes). */
  units: number;
}

/** The unit price of `candidate` on this route, when it bills per unit. */
export function unitUsdOf(request: MediaRequest, candidate: RouteCandidate): number | undefined {
  const billing = candidate.offer.unitBilling;
  if (request.route.type === 'image') return billing?.imageUsd;
  if (request.route.type === 'video') return billing?.videoUsd ?? 0;
  return undefined;
}

/** Concatenated string values of a JSON body (the prompt, question and options). */
function stringsOf(value: unknown, key?: string): string {
  if (key === 'model') return '';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((item) => stringsOf(item)).join('\n');
  if (value && typeof value === 'object') {
    return Object.entries(value)
      .map(([name, inner]) => stringsOf(inner, name))
      .filter(Boolean)
      .join('\n');
  }
  return '';
}

/** Upper bound of the output tokens of one image of the requested size. */
function imageTokens(body: Record<string, unknown>): number {
  const size = typeof body.size === 'string' ? /^(\d{2,5})x(\d{2,5})$/.exec(body.size) : null;
  const pixels = size ? Number(size[1]) * Number(size[2]) : LARGEST_IMAGE_PIXELS;
  return Math.ceil(pixels / PIXELS_PER_IMAGE_TOKEN);
}

/**
 * The buyer's own count of a token-priced media answer, checked against the seller's claim: the
 * request's text in, and the answer's text (decisions) or each delivered image's bound (images).
 * Both are a stranger's text: counted on the tokenizer's yielding path (decision 100).
 */
export async function ownTokenCount(
  ctx: ProxyContext,
  request: MediaRequest,
  answer: Record<string, unknown> | undefined,
): Promise<TokenUsage> {
  const inputTokens = await countTextTokensAsync(stringsOf(ctx.request.body));
  if (request.route.type === 'image') {
    const images = Array.isArray(answer?.data) ? Math.min(answer.data.length, request.units) : 0;
    return {
      inputTokens,
      cachedInputTokens: 0,
      outputTokens: images * imageTokens(ctx.request.body),
    };
  }
  const said = answer ? stringsOf({ answer: answer.answer }) : '';
  return { inputTokens, cachedInputTokens: 0, outputTokens: await countTextTokensAsync(said) };
}

/** The call to `candidate`, or a skip when the gateway's max cost cannot cover it. */
export function mediaCall(
  ctx: ProxyContext,
  request: MediaRequest,
  candidate: RouteCandidate,
): SellerCall | AttemptFailure {
  const { offer } = candidate;
  const headers = headersForSeller(ctx.request.head);
  let body: Uint8Array;
  if (request.route.kind === 'image-edit') {
    headers['content-type'] = request.contentType ?? '';
    body = request.raw;
  } else {
    const forwarded = withoutRoutingFields(ctx.request.body);
    body = new TextEncoder().encode(JSON.stringify({ ...forwarded, model: offer.serviceId }));
  }
  const base = { path: request.path, body, headers, whole: true, inputTokens: async () => 0 };
  const unitUsd = unitUsdOf(request, candidate);
  if (unitUsd !== undefined) {
    const price = unitPriceMicro(usdNumberToMicro(unitUsd));
    // A video job is queued unpaid: the retrieve pays for the video.
    if (request.route.kind === 'video-queue') return { ...base, price };
    return checked(ctx, candidate, {
      ...base,
      price,
      maxCostMicro: costOfUsage(unitUsage(request.units), price),
    });
  }
  // Token-priced (decisions; image services without a per-image price).
  const maxOut =
    request.route.type === 'decision'
      ? DECISION_MAX_OUTPUT
      : (offer.capabilities?.maxOutputTokens ?? 4096);
  return checked(ctx, candidate, {
    ...base,
    price: offer.price,
    maxCostMicro: maxCostOfRequest(Math.ceil(body.byteLength / 2), maxOut, offer.price),
  });
}

function checked(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  call: SellerCall,
): SellerCall | AttemptFailure {
  if (candidate.offer.free || call.maxCostMicro === undefined) return call;
  if (
    ctx.request.limits.maxCostMicro === undefined ||
    call.maxCostMicro <= ctx.request.limits.maxCostMicro
  )
    return call;
  // Failover goes only to offers the cap covers (docs/decisions/169-reservations-priced-at-the-route.md).
  const error = new SvcError('spend_limit_reached', {
    message: `This request may cost up to ${formatUsd(call.maxCostMicro)} USD at seller ${candidate.offer.peerId}, above its budget (${SVC_HEADER.maxCostUsd} ${formatUsd(ctx.request.limits.maxCostMicro)}).`,
    details: { peerId: candidate.offer.peerId },
  });
  return failure('skip', error, error.code);
}
