/** Reading a request body with a byte limit. */
import type { IncomingMessage } from 'node:http';
import { finished } from 'node:stream';
import { SvcError } from '../errors/index.js';

/**
 * Reads the whole body, refusing with 413 `body_too_large` as soon as it exceeds `limitBytes`, by
 * its Content-Length or by the bytes counted. `limitName` names the setting in the message.
 */
export function readBody(
  req: IncomingMessage,
  limitBytes: number,
  limitName?: string,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    return Promise.reject(tooLarge(limitBytes, limitName));
  }
  // `data` events and `finished` instead of the stream's async iterator, which builds promises
  // and an end-of-stream watcher per chunk: the same errors (a stream error, a premature close).
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        settled = true;
        // The rest of the body is not read (the refusal closes the connection).
        req.off('data', onData);
        req.pause();
        reject(tooLarge(limitBytes, limitName));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    finished(req, { writable: false }, (error) => {
      req.off('data', onData);
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
  });
}

function tooLarge(limitBytes: number, limitName: string | undefined): SvcError {
  return new SvcError('body_too_large', {
    message: `The request body is larger than ${limitBytes} bytes${limitName ? ` (${limitName})` : ''}.`,
    details: { limitBytes },
    // The rest of the body is not read: the connection cannot carry another request.
    headers: { connection: 'close' },
  });
}
