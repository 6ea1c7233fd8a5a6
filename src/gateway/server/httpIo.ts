/** Small HTTP helpers: bounded body reading, backpressured writes, error and JSON replies. */
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ErrorStyle, renderBothStyles, renderError, SvcError } from '../../errors/index.js';

/** Reads the whole body, refusing more than `limitBytes` (413 body_too_large). */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limitBytes) throw tooLarge(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw tooLarge(limitBytes);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function tooLarge(limitBytes: number): SvcError {
  return new SvcError('body_too_large', {
    message: `The request body is larger than this gateway accepts (${limitBytes} bytes).`,
    headers: { connection: 'close' },
  });
}

/** Writes a chunk, waiting for the client to drain (or to go away). False when it went away. */
export async function writeChunk(res: ServerResponse, chunk: Buffer): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  await Promise.race([once(res, 'drain'), once(res, 'close')]);
  return !res.destroyed;
}

/** Replies with an SvcError in the route's API style. */
export function sendError(res: ServerResponse, error: SvcError, style: ErrorStyle): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A refused key answers in both vendors' shapes: coding tools pick their SDK independently of
  // the route, and each must show the reason rather than a generic failure.
  const body = JSON.stringify(
    error.status === 401 ? renderBothStyles(error) : renderError(error, style),
  );
  res.writeHead(error.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...(error.headers ?? {}),
  });
  res.end(body);
}

/** Replies with JSON. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
