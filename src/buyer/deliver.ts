/**
 * Writes a seller's successful answer to the client: spec 4.5 headers, the body (streamed with
 * backpressure, or whole), the closing `: svc-usage` SSE comment (SEAMS.md), then payment
 * completion, health, affinity and the request record.
 */
import { once } from 'node:events';
import { SvcError } from '../errors/index.js';
import { formatUsd, type TokenUsage } from '../money/index.js';
import type { SellerTrailer } from '../network/index.js';
import type { RouteCandidate } from '../routing/index.js';
import type { AttemptOutcome } from './attempt.js';
import { commitCost, journal } from './commitCost.js';
import { finishRequest, type ProxyContext, ZERO_USAGE } from './context.js';
import { CostCap, capErrorEvents } from './costCap.js';
import { countTextTokens, textOf } from './tokenCount.js';
import { StreamUsageScanner, usageFromBody } from './usage.js';

type Ok = Extract<AttemptOutcome, { kind: 'ok' }>;

/** Longest wait for the seller's usage claim after its body ended. */
const TRAILER_WAIT_MS = 2_000;

/** Request id, seller identity and price headers (sent on streams too). */
export function sellerHeaders(
  ctx: ProxyContext,
  candidate: RouteCandidate,
): Record<string, string> {
  const { offer } = candidate;
  const pricing = offer.pricing;
  return {
    'x-svc-request-id': ctx.requestId,
    'x-svc-peer-id': offer.peerId,
    'x-svc-provider': offer.provider,
    'x-svc-service': offer.serviceId,
    'x-svc-input-usd-per-million': String(pricing.inputUsdPerMillion),
    'x-svc-output-usd-per-million': String(pricing.outputUsdPerMillion),
    // Without an advertised cached price, cached tokens bill at the input price.
    'x-svc-cached-input-usd-per-million': String(
      pricing.cachedInputUsdPerMillion ?? pricing.inputUsdPerMillion,
    ),
    'x-svc-peer-reputation':
      candidate.reputationScore === undefined ? 'unscored' : String(candidate.reputationScore),
    'x-svc-attempts': ctx.attempts.join(', ') || 'none',
  };
}

function usageHeaders(usage: TokenUsage, source: 'usage' | 'estimated', costUsd: string) {
  return {
    'x-svc-input-tokens': String(usage.inputTokens),
    'x-svc-cached-input-tokens': String(usage.cachedInputTokens),
    'x-svc-output-tokens': String(usage.outputTokens),
    'x-svc-total-tokens': String(usage.inputTokens + usage.outputTokens),
    'x-svc-token-source': source,
    'x-svc-estimated-cost-usd': costUsd,
  };
}

function settleUsage(
  reported: TokenUsage | undefined,
  claimed: TokenUsage | undefined,
  inputTokens: () => number,
  outputText: () => string,
): { usage: TokenUsage; source: 'usage' | 'estimated'; estimate: () => TokenUsage } {
  let estimated: TokenUsage | undefined;
  const estimate = () => {
    estimated ??= {
      inputTokens: inputTokens(),
      cachedInputTokens: 0,
      outputTokens: countTextTokens(outputText()),
    };
    return estimated;
  };
  const usage = reported ?? claimed;
  if (usage && usage.cachedInputTokens <= usage.inputTokens)
    return { usage, source: 'usage', estimate };
  return { usage: estimate(), source: 'estimated', estimate };
}

function afterSuccess(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  affinityKey: string | undefined,
  responseId: string | undefined,
  overshot = false,
): void {
  const { service } = ctx;
  // A seller that went past the request's cost cap is cut off and counted as failing.
  if (overshot) service.health.recordFailure(candidate.offer.peerId);
  else service.health.recordSuccess(candidate.offer.peerId);
  if (affinityKey) service.affinity.remember(affinityKey, candidate.offer.peerId);
  // A later `previous_response_id` must reach the seller that holds that response.
  if (responseId)
    service.affinity.remember(responseAffinityKey(responseId), candidate.offer.peerId);
}

/** Delivers a successful seller response. */
export async function deliver(
  ctx: ProxyContext,
  candidate: RouteCandidate,
  ok: Ok,
  affinityKey: string | undefined,
): Promise<void> {
  const { res } = ctx;
  const { deps } = ctx.service;
  const { response } = ok;
  const contentType = response.headers['content-type'] ?? 'application/json';
  const streamed = contentType.includes('text/event-stream');
  const base = {
    streamed,
    peerId: candidate.offer.peerId,
    provider: candidate.offer.provider,
    serviceId: candidate.offer.serviceId,
    model: candidate.offer.modelName,
  };
  // A trailer that never comes (body abandoned) must not hold the request.
  let trailerTimer: NodeJS.Timeout | undefined;
  const trailer = Promise.race([
    response.trailer.catch(() => undefined),
    new Promise<undefined>((resolve) => {
      trailerTimer = setTimeout(() => resolve(undefined), TRAILER_WAIT_MS);
      trailerTimer.unref();
    }),
  ]);
  // Once settled, the timer only keeps this request's objects alive: drop it.
  void trailer.then(() => clearTimeout(trailerTimer));

  if (!streamed) {
    const chunks: Uint8Array[] = [];
    try {
      for await (const chunk of response.body) chunks.push(chunk);
    } catch (error) {
      ok.release();
      throw error;
    }
    ok.release();
    let bytes = Buffer.concat(chunks);
    let sellerJson: unknown;
    try {
      sellerJson = JSON.parse(bytes.toString('utf8'));
    } catch {
      sellerJson = undefined;
    }
    let json = sellerJson;
    if (candidate.sellerProtocol !== ctx.route.protocol) {
      try {
        json = deps.translator.response(ctx.route.protocol, candidate.sellerProtocol, sellerJson);
        bytes = Buffer.from(JSON.stringify(json));
      } catch (cause) {
        throw new SvcError('invalid_seller_response', {
          message: `Seller ${candidate.offer.peerId} sent a ${candidate.sellerProtocol} response that could not be translated.`,
          details: { peerId: candidate.offer.peerId },
          cause,
        });
      }
    }
    const sellerTrailer = (await trailer) as SellerTrailer | undefined;
    const { usage, source, estimate } = settleUsage(
      usageFromBody(candidate.sellerProtocol, sellerJson),
      sellerTrailer?.usage,
      ok.inputTokens,
      // What the seller delivered (before translation, which may drop e.g. thinking blocks).
      () => textOf(sellerJson ?? ''),
    );
    const draft = { ...base, status: response.status, completed: true, usage };
    const cost = await commitCost(ctx, candidate, ok, sellerTrailer, estimate, usage, draft);
    const costUsd = formatUsd(cost);
    res.writeHead(response.status, {
      'content-type': contentType,
      'content-length': bytes.length,
      ...sellerHeaders(ctx, candidate),
      ...usageHeaders(usage, source, costUsd),
      'x-svc-latency-ms': String(deps.clock() - ctx.startedAt),
    });
    res.end(bytes);
    ctx.service.metrics.spend.inc(Number(cost));
    finishRequest(ctx, { ...base, status: response.status, completed: true, usage, costUsd });
    const responseId =
      candidate.sellerProtocol === 'openai-responses' &&
      ctx.route.protocol === 'openai-responses' &&
      json &&
      typeof json === 'object' &&
      typeof (json as { id?: unknown }).id === 'string'
        ? (json as { id: string }).id
        : undefined;
    afterSuccess(ctx, candidate, affinityKey, responseId);
    return;
  }

  res.writeHead(response.status, {
    'content-type': contentType,
    'cache-control': 'no-cache',
    ...sellerHeaders(ctx, candidate),
  });
  res.flushHeaders();
  // Journaled as open: a buyer restart mid-stream still knows the request.
  journal(ctx, { ...base, status: response.status, completed: false, usage: ZERO_USAGE }, 0n);
  const cap = new CostCap({
    maxCostMicro: ok.maxCostMicro,
    price: candidate.offer.price,
    inputTokens: ok.inputTokens,
    sellerProtocol: candidate.sellerProtocol,
  });
  const scanner = new StreamUsageScanner(candidate.sellerProtocol);
  // Usage is read from the seller's own events, before any translation. The translator may
  // stop at the terminal event; the rest (a usage chunk, [DONE]) is drained afterwards, so
  // early exits of the translator never close the seller's body.
  const sellerEvents = response.body[Symbol.asyncIterator]();
  const tapped: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        const step = await sellerEvents.next();
        if (!step.done) scanner.push(step.value);
        return step;
      },
    }),
  };
  let completed = true;
  let errorCode: string | undefined;
  try {
    const chunks = deps.translator.stream(
      ctx.route.protocol,
      candidate.sellerProtocol,
      cap.watch(tapped),
    );
    for await (const chunk of chunks) {
      if (ctx.clientAbort.signal.aborted) break;
      if (!res.write(chunk)) {
        await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
    }
    if (!ctx.clientAbort.signal.aborted && !cap.reached) {
      for (let step = await sellerEvents.next(); !step.done; step = await sellerEvents.next()) {
        scanner.push(step.value);
      }
    }
  } catch {
    completed = false;
    errorCode = ctx.clientAbort.signal.aborted ? 'request_cancelled' : 'seller_error';
    // Same-format streams pass bytes through: the cut needs its error event written here.
    if (cap.reached && !res.destroyed) res.write(capErrorEvents(ctx.route.protocol));
  } finally {
    ok.release();
  }
  if (cap.reached) {
    completed = true;
    errorCode = 'max_cost_reached';
    ok.controller.abort(new Error('cost cap reached'));
    await sellerEvents.return?.().catch(() => undefined);
  }
  if (ctx.clientAbort.signal.aborted) {
    completed = false;
    errorCode = 'request_cancelled';
    ok.controller.abort(new Error('client cancelled'));
    await sellerEvents.return?.().catch(() => undefined);
  }
  // A cut seller's claim is not waited for: the buyer pays its own count, capped.
  const sellerTrailer = cap.reached ? undefined : ((await trailer) as SellerTrailer | undefined);
  const { usage, estimate } = settleUsage(
    scanner.usage,
    sellerTrailer?.usage,
    ok.inputTokens,
    () => scanner.streamedText,
  );
  const draft = {
    ...base,
    status: completed ? response.status : 499,
    completed,
    usage,
    ...(errorCode ? { errorCode } : {}),
  };
  const cost = await commitCost(ctx, candidate, ok, sellerTrailer, estimate, usage, draft);
  const costUsd = formatUsd(cost);
  if (!res.destroyed) {
    res.write(
      `: svc-usage ${JSON.stringify({
        inputTokens: usage.inputTokens,
        cachedInputTokens: usage.cachedInputTokens,
        outputTokens: usage.outputTokens,
        costUsd,
      })}\n\n`,
    );
    res.end();
  }
  ctx.service.metrics.spend.inc(Number(cost));
  finishRequest(ctx, { ...draft, costUsd });
  const streamedResponseId =
    candidate.sellerProtocol === 'openai-responses' && ctx.route.protocol === 'openai-responses'
      ? scanner.responseId
      : undefined;
  afterSuccess(ctx, candidate, affinityKey, streamedResponseId, cap.reached);
}

/** Affinity key of a stored response (responses API `previous_response_id`). */
export function responseAffinityKey(responseId: string): string {
  return `response|${responseId}`;
}
