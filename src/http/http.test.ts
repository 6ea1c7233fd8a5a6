/** The HTTP toolkit against a real node:http server on loopback. */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SvcError } from '../errors/index.js';
import {
  header,
  localUrl,
  parseJsonObject,
  parseJsonRequest,
  readBody,
  sendError,
  sendJsonPieces,
} from './index.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
});

async function serve(handler: Handler): Promise<number> {
  const server = createServer((req, res) => {
    handler(req, res).catch((error: unknown) =>
      sendError(res, error instanceof SvcError ? error : new SvcError('internal_error'), 'openai'),
    );
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}

/** One POST; resolves with the status and body, or with the error that cut it. */
function post(
  port: number,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', (error) => resolve({ error: error.message }));
    });
    req.on('error', (error) => resolve({ error: error.message }));
    req.end(body);
  });
}

describe('http toolkit', () => {
  it('reads a body up to its limit and answers 413 body_too_large past it', async () => {
    const port = await serve(async (req, res) => {
      const raw = await readBody(req, 16, 'test.limit');
      res.end(`got ${raw.length}`);
    });
    expect(await post(port, 'x'.repeat(16))).toEqual({ status: 200, body: 'got 16' });
    const refused = await post(port, 'x'.repeat(17));
    expect(refused).toMatchObject({ status: 413 });
    expect(JSON.parse((refused as { body: string }).body).error.code).toBe('body_too_large');
    expect((refused as { body: string }).body).toContain('test.limit');
  });

  it('reads a body sent in pieces whole, and fails (not hangs) when the client goes away', async () => {
    const outcomes: Array<number | string> = [];
    let seen: () => void = () => undefined;
    const port = await serve(async (req, res) => {
      try {
        const raw = await readBody(req, 1_000_000);
        outcomes.push(raw.length);
        res.end('ok');
      } catch (error) {
        outcomes.push((error as { code?: string }).code ?? 'error');
      }
      seen();
    });
    const pieces = request({ port, host: '127.0.0.1', method: 'POST' }, (res) => res.resume());
    for (let i = 0; i < 5; i++) {
      pieces.write('x'.repeat(1000));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    let done = new Promise<void>((resolve) => {
      seen = resolve;
    });
    pieces.end();
    await done;
    expect(outcomes).toEqual([5000]);
    const cut = request({ port, host: '127.0.0.1', method: 'POST' });
    cut.on('error', () => undefined);
    done = new Promise<void>((resolve) => {
      seen = resolve;
    });
    cut.write('x'.repeat(1000));
    await new Promise((resolve) => setTimeout(resolve, 20));
    cut.destroy();
    await done;
    expect(outcomes[1]).toBe('ECONNRESET');
  });

  it('parses only JSON objects, naming the position of a syntax error', () => {
    const bytes = (text: string) => new TextEncoder().encode(text);
    expect(parseJsonObject(bytes('{"a":1}'))).toEqual({ a: 1 });
    for (const text of ['[1]', '"s"', 'null', '3']) {
      expect(() => parseJsonObject(bytes(text))).toThrow(/must be a JSON object/);
    }
    try {
      parseJsonObject(bytes('{"a":'));
      expect.unreachable();
    } catch (error) {
      expect((error as SvcError).code).toBe('invalid_json');
      expect((error as SvcError).status).toBe(400);
    }
    const req = { headers: { 'content-type': 'text/plain' } } as IncomingMessage;
    expect(() => parseJsonRequest(req, bytes('{}'))).toThrow(/application\/json/);
  });

  it('refuses bytes that are not UTF-8 and nesting past 128 levels, whatever strings hold', () => {
    const codeOf = (bytes: Uint8Array) => {
      try {
        parseJsonObject(bytes);
        return 'parsed';
      } catch (error) {
        return (error as SvcError).code;
      }
    };
    const text = (value: string) => new TextEncoder().encode(value);
    expect(codeOf(Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).toBe(
      'invalid_json',
    );
    const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    expect(codeOf(text(nested(128)))).toBe('parsed');
    expect(codeOf(text(nested(129)))).toBe('invalid_request');
    expect(codeOf(text(`{"a":"${'['.repeat(10_000)}"}`))).toBe('parsed');
    expect(codeOf(text(`{"a":"\\"${'['.repeat(200)}"}`))).toBe('parsed');
  });

  it('judges nesting after any mix of quotes and backslashes as a byte-by-byte scan does', () => {
    // The scan strings are skipped by, byte by byte: a backslash escapes the next byte.
    const deeper = (bytes: Uint8Array, limit: number) => {
      let depth = 0;
      let inString = false;
      for (let i = 0; i < bytes.length; i++) {
        const byte = bytes[i];
        if (inString) {
          if (byte === 0x5c) i++;
          else if (byte === 0x22) inString = false;
        } else if (byte === 0x22) inString = true;
        else if (byte === 0x7b || byte === 0x5b) {
          depth++;
          if (depth > limit) return true;
        } else if (byte === 0x7d || byte === 0x5d) depth--;
      }
      return false;
    };
    const pieces = ['"', '\\', '\\"', '\\\\"', '[', '{', ']', 'x', 'é'];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    for (let round = 0; round < 3000; round++) {
      let text = '';
      for (let i = random(60); i > 0; i--) text += pieces[random(pieces.length)];
      const bytes = new TextEncoder().encode(`${text}${'['.repeat(random(2) ? 129 : 5)}`);
      let code = 'parsed';
      try {
        parseJsonObject(bytes);
      } catch (error) {
        code = (error as SvcError).code;
      }
      expect(code === 'invalid_request').toBe(deeper(bytes, 128));
    }
  });

  it('cuts the connection when an error comes after the head was sent, never a clean end', async () => {
    const port = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: partial\n\n');
      await new Promise((done) => setTimeout(done, 20));
      throw new SvcError('upstream_error');
    });
    const outcome = await post(port, '{}');
    expect(outcome).toHaveProperty('error');
  });

  it('sends a JSON body made piece by piece as the client reads it, long pieces sliced', async () => {
    const made: number[] = [];
    const port = await serve(async (_req, res) => {
      function* pieces(): Generator<string> {
        yield '{"data":[';
        for (let i = 0; i < 200; i++) {
          made.push(i);
          // Each piece ~20 KB of text with a character outside ASCII, some far past a slice.
          const text = JSON.stringify({ i, text: 'é'.repeat(i % 7 === 0 ? 70_000 : 10_000) });
          yield i === 0 ? text : `,${text}`;
        }
        yield ']}';
      }
      sendJsonPieces(res, 200, pieces());
    });
    const outcome = await post(port, '{}');
    if ('error' in outcome) throw new Error(outcome.error);
    expect(outcome.status).toBe(200);
    const body = JSON.parse(outcome.body) as { data: { i: number; text: string }[] };
    expect(body.data.map((item) => item.i)).toEqual(made);
    expect(body.data[7]!.text).toBe('é'.repeat(70_000));
  });

  it('cuts the connection when a piece cannot be made after the head, never a clean end', async () => {
    const port = await serve(async (_req, res) => {
      function* pieces(): Generator<string> {
        yield '{"data":[';
        yield 'x'.repeat(200_000);
        throw new Error('the listing failed half-way');
      }
      sendJsonPieces(res, 200, pieces());
    });
    const outcome = await post(port, '{}');
    expect(outcome).toHaveProperty('error');
  });

  it('reads the first value of a header', () => {
    expect(header({ 'x-a': ['1', '2'] }, 'x-a')).toBe('1');
    expect(header({ 'x-a': '3' }, 'x-a')).toBe('3');
    expect(header({}, 'x-a')).toBeUndefined();
  });
});

describe('localUrl', () => {
  it('names 127.0.0.1 for a wildcard listen address and brackets IPv6', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      expect(localUrl(server, '127.0.0.1')).toBe(`http://127.0.0.1:${port}`);
      expect(localUrl(server, '0.0.0.0')).toBe(`http://127.0.0.1:${port}`);
      expect(localUrl(server, '::')).toBe(`http://127.0.0.1:${port}`);
      expect(localUrl(server, '[::]')).toBe(`http://127.0.0.1:${port}`);
      expect(localUrl(server, '::1')).toBe(`http://[::1]:${port}`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
