/** Writing frames to a stream with backpressure that holds (docs/decisions/208-backpressure-that-holds.md). */
import type { Stream } from '@libp2p/interface';
import {
  abortError,
  DATA_FRAME_BYTES,
  encodeFrame,
  FrameError,
  FrameType,
  type FrameTypeValue,
} from './frames.js';

/**
 * Waits for the next `drain` of a stream whose `send` just returned false. The stream's own
 * `onDrain()` cannot serve: @libp2p/utils 7.4 keeps the promise of the first drain, so on a stream
 * that drained once every later `onDrain()` resolves at once and a writer never waits again (a
 * seller then queued a whole answer in memory for a buyer that did not read it). With `stallMs`, a
 * reader that takes no bytes for that long fails the stream: a stranger who asks and never reads
 * would otherwise hold the writer (a seller's slot, and the upstream call behind it) until the
 * request's total timeout.
 */
export function drained(stream: Stream, signal?: AbortSignal, stallMs?: number): Promise<void> {
  // Nothing queued (the window closed exactly on the last byte): no drain comes for an empty
  // queue, and the next write queues and waits instead.
  if (stream.writeBufferLength === 0 && !signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const finish = (error?: unknown) => {
      stream.removeEventListener('drain', onDrain);
      stream.removeEventListener('close', onClose);
      signal?.removeEventListener('abort', onAbort);
      clearTimeout(timer);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onDrain = () => finish();
    const onClose = (event: Event) =>
      finish(
        (event as Event & { error?: Error }).error ?? new FrameError('reset', 'stream closed'),
      );
    const onAbort = () => finish(abortError(signal!));
    stream.addEventListener('drain', onDrain);
    stream.addEventListener('close', onClose);
    signal?.addEventListener('abort', onAbort);
    if (stallMs !== undefined) {
      timer = setTimeout(() => {
        const seconds = Math.round(stallMs / 100) / 10;
        const stalled = new FrameError('timeout', `the reader took no bytes for ${seconds} s`);
        finish(stalled);
        stream.abort(stalled);
      }, stallMs);
      timer.unref();
    }
  });
}

/** Sends already-encoded frames, waiting for the stream to drain when its buffer is full. */
export async function writeBytes(
  stream: Stream,
  bytes: Uint8Array,
  signal?: AbortSignal,
  stallMs?: number,
): Promise<void> {
  if (!stream.send(bytes)) await drained(stream, signal, stallMs);
}

/** Sends one frame, waiting for the stream to drain when its buffer is full (backpressure). */
export async function writeFrame(
  stream: Stream,
  type: FrameTypeValue,
  payload: Uint8Array,
  signal?: AbortSignal,
  stallMs?: number,
): Promise<void> {
  if (!stream.send(encodeFrame(type, payload))) await drained(stream, signal, stallMs);
}

/** Sends body bytes as DATA frames of at most DATA_FRAME_BYTES. */
export async function writeData(
  stream: Stream,
  bytes: Uint8Array,
  signal?: AbortSignal,
  stallMs?: number,
): Promise<void> {
  for (let offset = 0; offset < bytes.byteLength; offset += DATA_FRAME_BYTES) {
    await writeFrame(
      stream,
      FrameType.data,
      bytes.subarray(offset, offset + DATA_FRAME_BYTES),
      signal,
      stallMs,
    );
  }
}
