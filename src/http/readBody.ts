/** Reading a request body, or any byte stream, with a byte limit. */
import type { IncomingMessage } from 'node:http';
import { finished, type Readable } from 'node:stream';
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
  return read(req, limitBytes, limitName);
}

/**
 * Reads a whole answer that may declare no length (an HTTP answer sent in pieces), refusing with
 * `body_too_large` as soon as the bytes counted exceed `limitBytes`. Unlike a request body, an
 * answer is destroyed when it fails: no reply has to go out on its connection first.
 */
export async function readStreamBody(stream: Readable, limitBytes: number): Promise<Buffer> {
  try {
    return await read(stream, limitBytes, undefined);
  } catch (error) {
    stream.destroy();
    throw error;
  }
}

function read(
  stream: Readable,
  limitBytes: number,
  limitName: string | undefined,
): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    new BodyReader(stream, limitBytes, limitName, resolve, reject);
  });
}

/**
 * One body read through `data` events and `finished` instead of the stream's async iterator,
 * which builds promises and an end-of-stream watcher per chunk: the same errors (a stream error, a
 * premature close). A class, not closures: no per-request function objects to name and collect.
 */
class BodyReader {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private readonly onData: (chunk: Buffer) => void;

  constructor(
    private readonly req: Readable,
    private readonly limitBytes: number,
    private readonly limitName: string | undefined,
    private readonly resolve: (body: Buffer) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.onData = this.data.bind(this);
    req.on('data', this.onData);
    finished(req, { writable: false }, this.end.bind(this));
  }

  private data(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size <= this.limitBytes) {
      this.chunks.push(chunk);
      return;
    }
    this.settled = true;
    // The rest of the body is not read (the refusal closes the connection).
    this.req.off('data', this.onData);
    this.req.pause();
    this.reject(tooLarge(this.limitBytes, this.limitName));
  }

  private end(error: Error | null | undefined): void {
    this.req.off('data', this.onData);
    if (this.settled) return;
    this.settled = true;
    if (error) this.reject(error);
    else {
      const { chunks } = this;
      this.resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.size));
    }
  }
}

function tooLarge(limitBytes: number, limitName: string | undefined): SvcError {
  return new SvcError('body_too_large', {
    message: `The request body is larger than ${limitBytes} bytes${limitName ? ` (${limitName})` : ''}.`,
    details: { limitBytes },
    // The rest of the body is not read: the connection cannot carry another request.
    headers: { connection: 'close' },
  });
}
