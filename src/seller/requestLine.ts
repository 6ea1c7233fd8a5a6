/**
 * The seller's one info line per request (src/log/requestLine.ts), written once the trailer is
 * known: the handler notes the model and request id as soon as it has them; the wrapper adds
 * the status, usage, cost and time. The line is written after the answer (`logAfterReply`): a
 * small answer's head, body and trailer go out in one write once the trailer is known, and
 * serialising a log line should not delay it.
 */
import { type Logger, logRequestLine, type RequestLine } from '../log/index.js';
import { formatUsd } from '../money/index.js';
import type { InboundRequest, OutboundReply } from '../network/index.js';

const noted = new WeakMap<InboundRequest, { model: string; requestId: string }>();

/** Records what the request is for, for its log line. */
export function noteRequest(
  request: InboundRequest,
  facts: { model: string; requestId: string },
): void {
  noted.set(request, facts);
}

/**
 * The trailer is made before the answer is written, and the answer's bytes leave in an immediate
 * queued as it is written (src/network/noiseBatch.ts), after the one that runs this: the line
 * waits one more round of immediates, so that it follows the answer instead of delaying it.
 */
function logAfterReply(logger: Logger, line: RequestLine): void {
  setImmediate(logRequestLine, logger, line);
}

/** Wraps a handler so that each request writes its line when its trailer is done. */
export function withRequestLines(
  logger: Logger,
  handler: (request: InboundRequest) => Promise<OutboundReply>,
): (request: InboundRequest) => Promise<OutboundReply> {
  return async (request) => {
    const started = performance.now();
    const reply = await handler(request);
    const trailer = reply.trailer;
    return {
      ...reply,
      trailer: async (bodyError) => {
        const result = trailer ? await trailer(bodyError) : {};
        const facts = noted.get(request);
        const usage = result.usage;
        const line = {
          requestId: facts?.requestId ?? null,
          route: request.path,
          model: facts?.model ?? null,
          peer: request.peerId,
          status: reply.status,
          inputTokens: usage?.inputTokens ?? 0,
          cachedInputTokens: usage?.cachedInputTokens ?? 0,
          outputTokens: usage?.outputTokens ?? 0,
          costUsd: formatUsd(BigInt(result.costMicroUsd ?? '0')),
          ms: Math.round(performance.now() - started),
          errorCode: result.error ?? null,
        };
        setImmediate(logAfterReply, logger, line);
        return result;
      },
    };
  };
}
