/** Writing replies: JSON bodies, errors in the client's API style, backpressured chunks. */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { type ErrorStyle, renderBothStyles, renderError, type SvcError } from '../errors/index.js';
import { jsonText, SLICE_CHARS, textSlices } from './jsonText.js';

/** Sends a JSON body with its length (a long one in slices: see jsonText.ts). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = jsonText(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  if (text.length <= SLICE_CHARS) {
    res.end(text);
    return;
  }
  writeSlices(res, textSlices(text));
}

/**
 * Sends a JSON body made as the client takes it, piece by piece (no length: chunked), so a long
 * listing never exists whole in memory. A piece that cannot be made once the head is sent cuts
 * the connection: the client sees an error, never a clean end of a partial body.
 */
export function sendJsonPieces(
  res: ServerResponse,
  status: number,
  pieces: Iterable<string>,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  writeSlices(res, slicesOf(pieces));
}

/** `before`, the JSON of each item comma-separated, then `after`: a JSON array, one item at a time. */
export function* jsonArrayPieces(
  before: string,
  items: Iterable<unknown>,
  after: string,
): Generator<string> {
  yield before;
  let first = true;
  for (const item of items) {
    yield first ? JSON.stringify(item) : `,${JSON.stringify(item)}`;
    first = false;
  }
  yield after;
}

function* slicesOf(pieces: Iterable<string>): Generator<string> {
  for (const piece of pieces) {
    if (piece.length <= SLICE_CHARS) yield piece;
    else yield* textSlices(piece);
  }
}

/**
 * Writes the slices of a long body as the client takes them: one more on each `drain`, so at most
 * one slice waits in memory beside what the socket holds.
 */
function writeSlices(res: ServerResponse, slices: Iterator<string>): void {
  for (;;) {
    if (res.destroyed) return;
    let next: IteratorResult<string>;
    try {
      next = slices.next();
    } catch {
      res.destroy();
      return;
    }
    if (next.done) {
      res.end();
      return;
    }
    // A string, not a Buffer: node frees its copy as soon as the socket took it, where a Buffer's
    // memory would wait for a garbage collection.
    if (!res.write(next.value)) {
      res.once('drain', () => writeSlices(res, slices));
      return;
    }
  }
}

/**
 * Sends an SvcError in the client's API style. Once the head is sent a status can no longer be
 * given, so the response is destroyed: the client sees a cut connection (an error), never a clean
 * end that would pass a truncated answer off as complete.
 */
export function sendError(
  res: ServerResponse,
  error: SvcError,
  style: ErrorStyle,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A refused key answers in both vendors' shapes: coding tools pick their SDK independently of
  // the route, and each must show the reason rather than a generic failure (decision 125).
  const body = error.status === 401 ? renderBothStyles(error) : renderError(error, style);
  sendJson(res, error.status, body, { ...headers, ...(error.headers ?? {}) });
}

/** Writes a chunk, waiting for the client to drain (or to go away). False when it went away. */
export async function writeChunk(res: ServerResponse, chunk: Uint8Array): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  await Promise.race([once(res, 'drain'), once(res, 'close')]);
  return !res.destroyed;
}
