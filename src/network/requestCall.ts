/**
 * One request of the buyer's transport (transport.ts) once its stream is chosen: its abort
 * controller and timeouts, how a failure is named, and the answer's head, body and trailer.
 */
import type { Connection, Stream } from '@libp2p/interface';
import { asError, errorMessage } from '../errors/index.js';
import type { PeerId } from '../identity/index.js';
import type { PeerRoute } from './directory.js';
import { FrameError, type FrameReader, FrameType } from './frames.js';
import type { ReceiptInputs } from './receiptInputs.js';
import type { RequestStream } from './requestStream.js';
import { frameLimit, parseFrame, responseHeadSchema, trailerSchema } from './requestWire.js';
import type { KeptStream, StreamPool } from './streamPool.js';
import {
  type SellerResponse,
  type SellerTrailer,
  TransportError,
  type TransportFailure,
} from './types.js';
import { quickResponseHead, quickTrailer } from './wireChecks.js';

const HEAD_TIMEOUT_MESSAGE = 'no response head in time';

export class Cancelled extends Error {}
export class TimedOut extends Error {}

/** The stream one request runs on, and where it came from. */
export interface Lease extends RequestStream {
  reader: FrameReader;
  connection: Connection;
  /** A `/svc/request/2` stream: back to the pool after a whole answer. */
  kept?: KeptStream;
  /** The stream carried a request before (from the pool). */
  reused: boolean;
  /** The reader's `bytesTaken` when this request began: more means the seller answered. */
  from: number;
}

export type ResponseHead = Pick<SellerResponse, 'status' | 'headers'>;

/**
 * One request's abort controller: the caller's signal, the total timeout and the idle timeout (a
 * wait for the seller's next frame longer than `idleTimeoutMs`) all abort it.
 */
export class Call {
  readonly controller = new AbortController();
  private readonly total: NodeJS.Timeout;
  private idle: NodeJS.Timeout | undefined;
  /** When the wait for the seller's next frame began (0: not waiting). */
  private waitingSince = 0;

  constructor(
    readonly peerId: PeerId,
    readonly route: PeerRoute,
    private readonly callerSignal: AbortSignal | undefined,
    totalTimeoutMs: number,
    private readonly idleTimeoutMs: number,
  ) {
    // The call itself is the caller signal's listener and the timer gets module functions: no
    // closures per request.
    callerSignal?.addEventListener('abort', this, { once: true });
    this.total = setTimeout(abortCall, totalTimeoutMs, this.controller, TIMED_OUT);
    this.total.unref();
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.controller.abort(new Cancelled('request cancelled'));
  }

  /**
   * Around each read of the answer's next frame: only time spent waiting on the seller counts,
   * not a client slow to take what was read. One timer per call, armed on the first wait and
   * moved on only when it fires.
   */
  awaitingSeller(waiting: boolean): void {
    this.waitingSince = waiting ? Date.now() : 0;
    if (waiting && this.idle === undefined) this.armIdle(this.idleTimeoutMs);
  }

  private armIdle(ms: number): void {
    this.idle = setTimeout(() => this.checkIdle(), ms);
    this.idle.unref();
  }

  private checkIdle(): void {
    this.idle = undefined;
    if (this.waitingSince === 0) return;
    const waited = Date.now() - this.waitingSince;
    if (waited < this.idleTimeoutMs) {
      this.armIdle(this.idleTimeoutMs - waited);
      return;
    }
    const seconds = Math.round(this.idleTimeoutMs / 100) / 10;
    this.controller.abort(new FrameError('timeout', `no bytes from the seller for ${seconds} s`));
  }

  /** Clears the timeouts and stops listening to the caller's signal. */
  cleanup(): void {
    clearTimeout(this.total);
    clearTimeout(this.idle);
    this.callerSignal?.removeEventListener('abort', this);
  }
}

const TIMED_OUT = 'total';
export const HEAD_TIMED_OUT = 'head';

export function abortCall(
  controller: AbortController,
  why: typeof TIMED_OUT | typeof HEAD_TIMED_OUT,
) {
  controller.abort(
    why === TIMED_OUT
      ? new TimedOut('request took too long')
      : new FrameError('timeout', HEAD_TIMEOUT_MESSAGE),
  );
}

export function transportFailure(
  peerId: PeerId,
  failure: TransportFailure,
  message: string,
  beforeHead: boolean,
  cause?: unknown,
): TransportError {
  return new TransportError(failure, peerId, message, { beforeHead, cause });
}

/** Resets the stream and names the failure by what aborted the call, else by the frame error. */
export function classify(
  call: Call,
  error: unknown,
  beforeHead: boolean,
  stream?: Stream,
): TransportError {
  const fail = (failure: TransportFailure, message: string) =>
    transportFailure(call.peerId, failure, message, beforeHead, error);
  const reason: unknown = call.controller.signal.reason;
  stream?.abort(asError(error));
  if (reason instanceof Cancelled) return fail('cancelled', 'request cancelled');
  if (reason instanceof TimedOut) return fail('timeout', reason.message);
  // The head timeout (exchangeHead), whatever step it interrupted.
  if (reason instanceof FrameError && reason.kind === 'timeout')
    return fail('timeout', reason.message);
  if (error instanceof FrameError) {
    if (error.kind === 'timeout' || error.kind === 'aborted') return fail('timeout', error.message);
    if (error.kind === 'protocol' || error.kind === 'too_large')
      return fail('protocol', error.message);
    return fail('reset', `seller closed the stream: ${error.message}`);
  }
  return fail('reset', errorMessage(error));
}

/** Reads the response head frame (the head timeout aborts `signal` with a timeout FrameError). */
export async function readResponseHead(
  reader: FrameReader,
  signal: AbortSignal,
): Promise<ResponseHead> {
  const frame = await reader.read(frameLimit, signal);
  if (frame === undefined) throw new FrameError('eof', 'seller closed the stream before answering');
  if (frame.type !== FrameType.head) throw new FrameError('protocol', 'expected a response head');
  return parseFrame(responseHeadSchema, frame.payload, 'response head', quickResponseHead);
}

/** The body chunks, pulled by the consumer, and the trailer they end with. */
export function responseBody(
  call: Call,
  lease: Lease,
  receipt: ReceiptInputs | undefined,
  pool: StreamPool | undefined,
): Pick<SellerResponse, 'body' | 'trailer'> {
  const { stream, reader, kept } = lease;
  const trailer = Promise.withResolvers<SellerTrailer | undefined>();
  let consumed = false;
  async function* body(): AsyncGenerator<Uint8Array> {
    if (consumed) throw new TypeError('the response body can only be read once');
    consumed = true;
    let finished = false;
    try {
      for (;;) {
        let frame: Awaited<ReturnType<FrameReader['read']>>;
        try {
          call.awaitingSeller(true);
          frame = await reader.read(frameLimit, call.controller.signal);
          call.awaitingSeller(false);
          if (frame === undefined)
            throw new FrameError('eof', 'seller closed the stream before the trailer');
          if (frame.type === FrameType.trailer) {
            const parsed = parseFrame(trailerSchema, frame.payload, 'trailer', quickTrailer);
            receipt?.end();
            trailer.resolve(parsed);
            finished = true;
            // A kept stream goes back to the pool if nothing is left unread on it.
            if (kept !== undefined && pool !== undefined) pool.give(kept);
            else await stream.close().catch(() => undefined);
            return;
          }
          if (frame.type !== FrameType.data)
            throw new FrameError('protocol', 'unexpected frame in response body');
        } catch (error) {
          throw classify(call, error, false, stream);
        }
        receipt?.chunk(frame.payload);
        yield frame.payload;
      }
    } finally {
      call.cleanup();
      if (!finished) {
        // The consumer stopped early or the stream failed: reset so the seller stops too.
        if (stream.status === 'open') stream.abort(new Error('request cancelled by the buyer'));
        trailer.resolve(undefined);
      }
    }
  }
  return { body: body(), trailer: trailer.promise };
}
