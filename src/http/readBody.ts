/** Reading a request body with a byte limit. */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../errors/index.js';

/**
 * Reads the whole body, refusing with 413 `body_too_large` as soon as it exceeds `limitBytes`, by
 * its Content-Length or by the bytes counted. `limitName` names the setting in the message.
 */
export async function readBody(
  req: IncomingMessage,
  limitBytes: number,
  limitName?: string,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge(limitBytes, limitName);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge(limitBytes, limitName);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(limitBytes: number, limitName: string | undefined): SvcError {
  return new SvcError('body_too_large', {
    message: `The request body is larger than ${limitBytes} bytes${limitName ? ` (${limitName})` : ''}.`,
    details: { limitBytes },
    // The rest of the body is not read: the connection cannot carry another request.
    headers: { connection: 'close' },
  });
}
