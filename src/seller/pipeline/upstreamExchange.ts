/**
 * One upstream HTTP exchange on undici's dispatcher, through its handler callbacks rather than
 * its `request` API (docs/decisions/204-seller-cpu-per-request.md): no Readable body, async
 * resource or end-of-stream watcher per request. The head resolves `head`; body chunks queue
 * here until read, whole (`readAll`) or chunk by chunk (async iteration, with backpressure:
 * the socket is paused while too much waits unread). The buyer's cancel aborts the exchange.
 */
import type { Dispatcher } from 'undici';

/** Body bytes queued unread before the upstream socket is paused. */
const HIGH_WATER_BYTES = 64 * 1024;
/** Bytes of a refused answer read (and dropped) to keep its connection; past this it is cut. */
const DISCARD_BYTES = 128 * 1024;

type Controller = Dispatcher.DispatchController;
type IncomingHeaders = Record<string, string | string[] | undefined>;

export interface ExchangeHead {
  status: number;
  headers: IncomingHeaders;
}

/** Raised when a whole body grows past the reader's bound (the exchange is aborted). */
export class BodyTooLarge extends Error {
  override name = 'BodyTooLarge';
}

/** A parsed upstream URL: undici's dispatcher takes the origin and path apart. */
interface Target {
  origin: string;
  path: string;
}

/** Parsed URLs: a seller calls a handful of them (a provider's base URL and a few paths). */
const targets = new Map<string, Target>();
const MAX_TARGETS = 256;

function targetOf(url: string): Target {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (targets.size >= MAX_TARGETS) targets.clear();
    targets.set(url, target);
  }
  return target;
}

export interface ExchangeRequest {
  url: string;
  headers: Record<string, string>;
  body: Uint8Array | string;
  signal: AbortSignal;
}

/** A request in flight: its head (a promise) and its body, read at most once. */
export class UpstreamExchange implements AsyncIterable<Uint8Array> {
  readonly head: Promise<ExchangeHead>;
  private resolveHead!: (head: ExchangeHead) => void;
  private rejectHead!: (error: unknown) => void;
  private headDone = false;
  private controller: Controller | undefined;
  private readonly chunks: Buffer[] = [];
  private queued = 0;
  private ended = false;
  private failure: unknown;
  /** The reader waiting for the next event (a chunk, the end or a failure). */
  private wake: (() => void) | undefined;
  /** Bytes a whole-body reader allows; undefined: chunks are iterated (backpressure applies). */
  private wholeLimit: number | undefined;
  private discarding = false;
  private readonly signal: AbortSignal;
  private readonly onAbort = () => this.abort(this.signal.reason);

  constructor(dispatcher: Dispatcher, request: ExchangeRequest) {
    this.head = new Promise<ExchangeHead>((resolve, reject) => {
      this.resolveHead = resolve;
      this.rejectHead = reject;
    });
    // Unhandled when the caller gave up before the head (it awaits it otherwise).
    this.head.catch(() => undefined);
    this.signal = request.signal;
    // A URL that does not parse throws here, before any listener is left behind.
    const { origin, path } = targetOf(request.url);
    if (this.signal.aborted) {
      this.fail(this.signal.reason);
      return;
    }
    this.signal.addEventListener('abort', this.onAbort, { once: true });
    dispatcher.dispatch(
      { origin, path, method: 'POST', headers: request.headers, body: request.body },
      this,
    );
  }

  // --- undici's handler callbacks ---

  onRequestStart(controller: Controller): void {
    this.controller = controller;
    if (this.failure !== undefined) controller.abort(asError(this.failure));
  }

  onResponseStart(controller: Controller, status: number, headers: IncomingHeaders): void {
    // 1xx informational heads come before the real one.
    if (status < 200) return;
    this.headDone = true;
    this.resolveHead({ status, headers });
    if (this.failure !== undefined) controller.abort(asError(this.failure));
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.discarding) {
      this.queued += chunk.byteLength;
      if (this.queued > DISCARD_BYTES) this.abort(new Error('discarded answer too long'));
      return;
    }
    this.chunks.push(chunk);
    this.queued += chunk.byteLength;
    if (this.wholeLimit !== undefined) {
      if (this.queued > this.wholeLimit) this.abort(new BodyTooLarge());
    } else if (this.queued > HIGH_WATER_BYTES) {
      controller.pause();
    }
    this.notify();
  }

  onResponseEnd(): void {
    this.ended = true;
    this.signal.removeEventListener('abort', this.onAbort);
    this.notify();
  }

  onResponseError(_controller: Controller, error: Error): void {
    this.fail(error);
  }

  // --- the caller's side ---

  /** Cancels the exchange: the head (if not in yet) and the body's reader fail with `reason`. */
  abort(reason: unknown): void {
    if (this.failure !== undefined || this.ended) return;
    this.fail(reason);
    this.controller?.abort(asError(reason));
  }

  /** Same as `abort` (the body's `destroy`, as a relay calls it). */
  destroy(): void {
    this.abort(new Error('upstream body destroyed'));
  }

  /** Reads and drops the body (a refused answer), keeping the connection when it is short. */
  discard(): void {
    this.discarding = true;
    this.chunks.length = 0;
    this.controller?.resume();
  }

  /** The whole body: rejects with `BodyTooLarge` past `maxBytes`, or with the exchange's failure. */
  async readAll(maxBytes: number): Promise<Buffer> {
    this.wholeLimit = maxBytes;
    this.controller?.resume();
    while (!this.ended && this.failure === undefined && this.queued <= maxBytes) {
      await this.next();
    }
    if (this.failure !== undefined) throw this.failure;
    if (this.queued > maxBytes) {
      this.abort(new BodyTooLarge());
      throw new BodyTooLarge();
    }
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.queued);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      if (this.chunks.length > 0) {
        // Everything queued goes on as one piece (as a Readable's `read()` gives it): chunks
        // that arrived while the relay was busy leave in one frame and one write, not one each.
        const chunk =
          this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.queued);
        this.chunks.length = 0;
        this.queued = 0;
        this.controller?.resume();
        yield chunk;
        continue;
      }
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return;
      await this.next();
    }
  }

  private next(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private fail(reason: unknown): void {
    this.failure ??= reason ?? new Error('upstream exchange aborted');
    this.signal.removeEventListener('abort', this.onAbort);
    if (!this.headDone) {
      this.headDone = true;
      this.rejectHead(this.failure);
    }
    this.notify();
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
