/**
 * Framing on libp2p streams: `[type u8][length u32 BE][payload]`. The reader applies
 * backpressure (pauses the stream, which stops the muxer's window updates, when too much is
 * buffered) and rejects oversized or unknown frames before reading their payload, so a hostile
 * peer can never make us buffer more than one frame's limit.
 */
import type { Stream } from '@libp2p/interface';

export const FrameType = {
  /** JSON request or response head. */
  head: 1,
  /** Body bytes. */
  data: 2,
  /** End of the request body. */
  end: 3,
  /** JSON trailer after the response body. */
  trailer: 4,
} as const;
export type FrameTypeValue = (typeof FrameType)[keyof typeof FrameType];

export interface Frame {
  type: FrameTypeValue;
  payload: Uint8Array;
}

const HEADER_BYTES = 5;
/** Largest DATA frame we send; readers accept up to `MAX_DATA_FRAME`. */
export const DATA_FRAME_BYTES = 64 * 1024;
export const MAX_DATA_FRAME = 1024 * 1024;
const KNOWN_TYPES = new Set<number>(Object.values(FrameType));
const ONCE = { once: true } as const;

/** Why a frame could not be read. */
export class FrameError extends Error {
  override name = 'FrameError';
  readonly kind: 'protocol' | 'too_large' | 'reset' | 'eof' | 'timeout' | 'aborted';
  constructor(kind: FrameError['kind'], message: string, cause?: unknown) {
    super(message, { cause });
    this.kind = kind;
  }
}

function toBytes(data: Uint8Array | { subarray(): Uint8Array }): Uint8Array {
  return data instanceof Uint8Array ? data : data.subarray();
}

/** Reads frames from one stream; create it as soon as the stream exists so no data is missed. */
export class FrameReader {
  private readonly stream: Stream;
  private readonly highWaterBytes: number;
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  /** Bytes taken so far (a reused stream's answer starts where the last one stopped). */
  private takenBytes = 0;
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  private readonly beforeWait: (() => void) | undefined;
  private readonly views: boolean;
  /** Inside `stream.resume()`: a pause now would be undone by it (see `take`). */
  private resuming = false;

  /**
   * `beforeWait` runs whenever a read has to wait for bytes that have not arrived yet (the
   * request server sends an owed multistream-select echo then: preNegotiated.ts). With `views`,
   * payloads are views of the received message when it holds them (see `take`): for readers
   * whose payloads do not outlive the request's next steps.
   */
  constructor(
    stream: Stream,
    highWaterBytes = 1024 * 1024,
    beforeWait?: () => void,
    views = false,
  ) {
    this.stream = stream;
    this.highWaterBytes = highWaterBytes;
    this.beforeWait = beforeWait;
    this.views = views;
    stream.addEventListener('message', (event) => {
      const bytes = toBytes(event.data);
      this.chunks.push(bytes);
      this.buffered += bytes.byteLength;
      if (!this.resuming) this.pauseIfFull();
      this.notify();
    });
    stream.addEventListener('remoteCloseWrite', () => {
      this.ended = true;
      this.notify();
    });
    stream.addEventListener('close', (event) => {
      if (event.error !== undefined) this.failure ??= event.error;
      this.ended = true;
      this.notify();
    });
  }

  /** Stops the stream's flow while more than the high-water mark waits here unread. */
  private pauseIfFull(): void {
    if (this.buffered > this.highWaterBytes && this.stream.readStatus === 'readable') {
      this.stream.pause();
    }
  }

  /** Bytes read off the stream so far, frames and raw reads alike. */
  get bytesTaken(): number {
    return this.takenBytes;
  }

  /** True when every byte received has been read: none buffered here or on the stream. */
  get drained(): boolean {
    return this.buffered === 0 && this.stream.readBufferLength === 0;
  }

  /** True when no more bytes can arrive (queued stream bytes still count as arriving). */
  private isEnded(): boolean {
    const stream = this.stream;
    if (stream.readBufferLength > 0 && stream.status === 'open') return false;
    return this.ended || stream.remoteWriteStatus === 'closed' || stream.status !== 'open';
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /**
   * The next `count` bytes. For a reader with `views`, a view of the first chunk when it holds
   * them all (the usual case: a frame rarely straddles two muxer messages; chunks are never
   * written to, so a view reads as a copy would), else a copy. A view keeps the whole received
   * message (up to 64 KiB, possibly other streams' frames too) alive as long as it lives: a seller
   * holding a small request body through a long upstream call would hold far more memory, so
   * readers that keep payloads copy.
   */
  private take(count: number): Uint8Array {
    const first = this.chunks[0];
    let out: Uint8Array;
    if (count === 0 || first === undefined) {
      out = new Uint8Array(0);
    } else if (this.views && first.byteLength >= count) {
      out = first.subarray(0, count);
      if (first.byteLength === count) this.chunks.shift();
      else this.chunks[0] = first.subarray(count);
    } else {
      out = new Uint8Array(count);
      let offset = 0;
      while (offset < count) {
        const head = this.chunks[0]!;
        const needed = count - offset;
        if (head.byteLength <= needed) {
          out.set(head, offset);
          offset += head.byteLength;
          this.chunks.shift();
        } else {
          out.set(head.subarray(0, needed), offset);
          this.chunks[0] = head.subarray(needed);
          offset += needed;
        }
      }
    }
    this.buffered -= count;
    this.takenBytes += count;
    if (this.buffered < this.highWaterBytes / 2 && this.stream.readStatus === 'paused') {
      // libp2p's `resume()` hands over what arrived while paused and only then tells the muxer to
      // resume: a pause from inside that hand-over would be undone at once, and the muxer would
      // go on granting window to a stream that reads nothing (its buffer then overflows and the
      // stream is reset). So the hand-over is taken whole, and the pause follows the resume.
      this.resuming = true;
      try {
        this.stream.resume();
      } finally {
        this.resuming = false;
      }
      this.pauseIfFull();
    }
    return out;
  }

  private async fill(
    count: number,
    signal: AbortSignal | undefined,
    atBoundary: boolean,
  ): Promise<boolean> {
    while (this.buffered < count) {
      if (signal?.aborted) throw abortError(signal);
      if (
        this.failure === undefined &&
        (this.stream.status === 'reset' || this.stream.status === 'aborted')
      ) {
        this.failure = new Error(`stream ${this.stream.status}`);
      }
      if (this.failure !== undefined) {
        throw new FrameError('reset', `stream reset: ${this.failure.message}`, this.failure);
      }
      if (this.isEnded()) {
        if (atBoundary && this.buffered === 0) return false;
        throw new FrameError('eof', 'stream ended in the middle of a frame');
      }
      if (this.stream.readBufferLength === 0) this.beforeWait?.();
      const { promise, resolve } = Promise.withResolvers<void>();
      this.wake = resolve;
      // The reader itself listens (`handleEvent`): an abort wakes the wait, which then throws.
      signal?.addEventListener('abort', this, ONCE);
      // Bytes queued before our listener existed are dispatched in a microtask.
      if (this.stream.readBufferLength > 0) queueMicrotask(resolve);
      await promise;
      // Long streams wait thousands of times on one signal: never leave listeners behind.
      signal?.removeEventListener('abort', this);
    }
    return true;
  }

  /** The signal of a waiting read aborted: wake it. */
  handleEvent(): void {
    this.notify();
  }

  /** Exactly `count` raw bytes (used before framing starts), or a FrameError. */
  async readRaw(count: number, signal?: AbortSignal): Promise<Uint8Array> {
    // `fill` only when bytes are missing: most reads find them buffered (no promise to await).
    if (this.buffered < count && !(await this.fill(count, signal, true))) {
      throw new FrameError('eof', 'stream ended before any answer');
    }
    return this.take(count);
  }

  /**
   * Next frame, or undefined at a clean end of stream. `maxBytes` bounds the payload by type;
   * an unknown type or a larger length fails before the payload is read.
   */
  async read(
    maxBytes: (type: FrameTypeValue) => number,
    signal?: AbortSignal,
  ): Promise<Frame | undefined> {
    if (this.buffered < HEADER_BYTES && !(await this.fill(HEADER_BYTES, signal, true))) {
      return undefined;
    }
    const header = this.take(HEADER_BYTES);
    const type = header[0]!;
    const length = ((header[1]! << 24) | (header[2]! << 16) | (header[3]! << 8) | header[4]!) >>> 0;
    if (!KNOWN_TYPES.has(type)) throw new FrameError('protocol', `unknown frame type ${type}`);
    const limit = maxBytes(type as FrameTypeValue);
    if (length > limit) {
      throw new FrameError('too_large', `frame of ${length} bytes exceeds ${limit}`);
    }
    if (this.buffered < length) await this.fill(length, signal, false);
    return { type: type as FrameTypeValue, payload: this.take(length) };
  }
}

/** The error a read or write ends with when `signal` aborted it. */
export function abortError(signal: AbortSignal): FrameError {
  const reason: unknown = signal.reason;
  if (reason instanceof FrameError) return reason;
  return new FrameError('aborted', reason instanceof Error ? reason.message : 'aborted', reason);
}

/** Encodes one frame. */
export function encodeFrame(type: FrameTypeValue, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(HEADER_BYTES + payload.byteLength);
  out[0] = type;
  new DataView(out.buffer).setUint32(1, payload.byteLength);
  out.set(payload, HEADER_BYTES);
  return out;
}

/** No bytes: an empty payload or prefix. */
export const EMPTY = new Uint8Array(0);

/** A frame to encode: its type and payload (a string is written as UTF-8, without a copy first). */
export type FramePart = readonly [FrameTypeValue, Uint8Array | string];

/**
 * `prefix` followed by `frames`, encoded into one buffer: one allocation and each payload copied
 * once, where encoding each frame and joining them copies every payload twice.
 */
export function encodeFrames(prefix: Uint8Array, frames: readonly FramePart[]): Buffer {
  let total = prefix.byteLength;
  const lengths: number[] = [];
  for (const [, payload] of frames) {
    const length =
      typeof payload === 'string' ? Buffer.byteLength(payload, 'utf8') : payload.byteLength;
    lengths.push(length);
    total += HEADER_BYTES + length;
  }
  const out = Buffer.allocUnsafe(total);
  out.set(prefix, 0);
  let offset = prefix.byteLength;
  for (let i = 0; i < frames.length; i++) {
    const [type, payload] = frames[i]!;
    const length = lengths[i]!;
    out[offset] = type;
    out.writeUInt32BE(length, offset + 1);
    offset += HEADER_BYTES;
    if (typeof payload === 'string') out.write(payload, offset, length, 'utf8');
    else out.set(payload, offset);
    offset += length;
  }
  return out;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** JSON payload of a HEAD or TRAILER frame. */
export function jsonPayload(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** Parses a JSON payload or throws a protocol FrameError. */
export function parseJsonPayload(payload: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(payload));
  } catch (error) {
    throw new FrameError('protocol', 'frame payload is not JSON', error);
  }
}
