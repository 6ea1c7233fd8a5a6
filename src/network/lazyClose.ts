/**
 * The buyer's half of a finished request stream, closed with the next write on its connection.
 * Once the trailer is read the buyer owes the seller a FIN, and sent at once it was a write of
 * its own (30 bytes: a yamux frame in a Noise message) that woke the seller for nothing: one
 * syscall, one encryption and one decryption per request on top of the request and its answer.
 * Closing is instead left to the next request stream opened on the same connection (its FIN
 * then leaves in that request's write), or to a sweep at most `SWEEP_MS` later when no request
 * follows. Nothing waits for these FINs: the seller has sent its whole answer and closed its
 * half already, and only releases the stream's bookkeeping when the FIN arrives (decision 158).
 * A buyer that cancels still resets the stream at once (transport.ts).
 */
import type { Stream } from '@libp2p/interface';

const SWEEP_MS = 200;

const pending = new Map<object, Stream[]>();
let sweep: NodeJS.Timeout | undefined;

function close(streams: Stream[]): void {
  for (const stream of streams) {
    if (stream.status === 'open') void stream.close().catch(() => undefined);
  }
}

function sweepAll(): void {
  sweep = undefined;
  const all = [...pending.values()];
  pending.clear();
  for (const streams of all) close(streams);
}

/** Closes `stream` (of `connection`) with the next request on it, or within `SWEEP_MS`. */
export function closeLater(connection: object, stream: Stream): void {
  const streams = pending.get(connection);
  if (streams === undefined) pending.set(connection, [stream]);
  else streams.push(stream);
  if (sweep === undefined) {
    sweep = setTimeout(sweepAll, SWEEP_MS);
    sweep.unref();
  }
}

/** Closes what waits on `connection` now (a request is about to be written on it). */
export function closePending(connection: object): void {
  const streams = pending.get(connection);
  if (streams === undefined) return;
  pending.delete(connection);
  close(streams);
}
