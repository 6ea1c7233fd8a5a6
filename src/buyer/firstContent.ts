/**
 * A stream starts, for the client, with its first content
 * (docs/decisions/217-a-stream-starts-with-its-first-content.md): the buyer holds the client's
 * head and the seller's preamble (a role-only chunk, `message_start`, `ping`, `response.created`,
 * an empty block; told from content at the seller's format by src/formats) until the first
 * content, the final event or a failure. A seller that fails first (reset, error event, malformed
 * event, a body that ends) has delivered nothing: the attempt fails like one before the head, and
 * the next seller may be tried. The hold is bounded in time (`buyer.headHoldSeconds`) and bytes;
 * past either the stream is committed as it is.
 */
import { errorMessage, SvcError } from '../errors/index.js';
import { TransportError } from '../network/index.js';
import { actionForStatus } from '../routing/index.js';
import type { ProxyContext } from './context.js';
import { type AttemptFailure, cancelled, failure } from './sellerFailure.js';
import type { SellerTap } from './sellerTap.js';

/**
 * Most preamble bytes held: a responses preamble echoes the request's instructions and tools
 * twice (`response.created`, `response.in_progress`), tens of KB for a coding agent. Past this
 * the stream is committed as it is.
 */
const MAX_HELD_BYTES = 256 * 1024;

/** Resolves when the hold's bound passes or the client goes away (the listener itself). */
class HoldEnd {
  readonly promise: Promise<false>;
  private readonly resolve: (value: false) => void;
  private readonly timer: NodeJS.Timeout;
  constructor(
    ms: number,
    private readonly client: AbortSignal,
  ) {
    const { promise, resolve } = Promise.withResolvers<false>();
    this.promise = promise;
    this.resolve = resolve;
    this.timer = setTimeout(resolve, ms, false);
    client.addEventListener('abort', this, { once: true });
  }
  handleEvent(): void {
    this.resolve(false);
  }
  clear(): void {
    clearTimeout(this.timer);
    this.client.removeEventListener('abort', this);
  }
}

/** Why a seller's stream failed before any content, as a failed attempt. */
function beforeContent(peerId: string, tap: SellerTap): AttemptFailure {
  const { scanner, thrown } = tap;
  const streamError = scanner.streamError;
  if (thrown === undefined && scanner.verdict === 'seller_error' && streamError) {
    // The seller's own error event (Anthropic's `overloaded_error` in a 200 stream): its status
    // decides as an error status would (a 400 is the request's fault and does not move on).
    const status = streamError.status;
    return failure(
      actionForStatus(status),
      new SvcError(status === 429 ? 'rate_limited' : 'upstream_error', {
        status,
        message: `Seller ${peerId} sent an error event before any content: ${streamError.message}`,
        details: { peerId, sellerStatus: status },
      }),
      'error_event',
    );
  }
  if (thrown !== undefined) {
    const kind = thrown instanceof TransportError ? thrown.failure : 'cut';
    return failure(
      'next',
      new SvcError(kind === 'timeout' ? 'seller_timeout' : 'seller_error', {
        message: `Seller ${peerId} failed before any content: ${errorMessage(thrown)}.`,
        details: { peerId, failure: kind },
      }),
      kind,
    );
  }
  if (scanner.verdict === 'malformed' || streamError) {
    return failure(
      'next',
      new SvcError('invalid_seller_response', {
        message: `Seller ${peerId} sent a stream event that could not be understood, before any content.`,
        details: { peerId },
      }),
      'malformed',
    );
  }
  return failure(
    'next',
    new SvcError('seller_error', {
      message: `Seller ${peerId}'s stream ended before any content.`,
      details: { peerId, failure: 'cut' },
    }),
    'cut',
  );
}

/**
 * Reads the seller's stream ahead of the client until its first content (or its final event),
 * at most `buyer.headHoldSeconds`; the chunks read are handed on by the tap first. Undefined when
 * the stream is to be delivered, or the failed attempt: a failure before any content, or the
 * client's cancel.
 */
export async function holdUntilContent(
  ctx: ProxyContext,
  peerId: string,
  tap: SellerTap,
): Promise<AttemptFailure | undefined> {
  const holdMs = ctx.service.deps.config.headHoldSeconds * 1000;
  if (holdMs === 0 || !tap.scanner.readsContent) return undefined;
  const end = new HoldEnd(holdMs, ctx.clientAbort.signal);
  try {
    while (tap.aheadBytes <= MAX_HELD_BYTES) {
      // false: the body ended or failed, the bound passed or the client went away.
      if (!(await Promise.race([tap.readAhead(), end.promise]))) break;
      const { scanner } = tap;
      // An event its format's reader gave up on ends the hold too: nothing after it is content.
      if (scanner.contentStarted || scanner.verdict !== 'open' || scanner.streamError) break;
    }
  } finally {
    end.clear();
  }
  if (ctx.clientAbort.signal.aborted) return cancelled();
  const { scanner } = tap;
  if (scanner.contentStarted) return undefined;
  if (!tap.failure() && !scanner.streamError) return undefined;
  return beforeContent(peerId, tap);
}
