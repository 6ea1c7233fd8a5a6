/** Writing replies: JSON bodies, errors in the client's API style, backpressured chunks. */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { type ErrorStyle, renderBothStyles, renderError, type SvcError } from '../errors/index.js';

/** Sends a JSON body with its length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
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
