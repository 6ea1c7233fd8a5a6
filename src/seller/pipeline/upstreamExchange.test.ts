/**
 * The seller's upstream call on undici's dispatcher, against a real local HTTP server: whole
 * bodies within and past the read cap, a large body read slowly (the socket is paused and
 * resumed, every byte arrives in order), and a cancel before the answer's head.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcError } from '../../errors/index.js';
import { PROVIDER_KINDS } from '../providers.js';
import { callUpstream, readUpstreamBody } from './upstream.js';

type Script = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let url: string;
let script: Script = (_req, res) => res.end();

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => script(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function call(signal = new AbortController().signal) {
  return callUpstream({
    kind: PROVIDER_KINDS['openai-chat'],
    url,
    apiKey: 'sk-test',
    headers: { 'content-type': 'application/json', cookie: 'dropped' },
    body: '{"model":"m"}',
    contentType: 'application/json',
    signal,
  });
}

describe('an upstream exchange', () => {
  it('reads a whole body, passes allow-listed headers both ways and the seller key', async () => {
    let seen: IncomingMessage['headers'] = {};
    script = (req, res) => {
      seen = req.headers;
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-request-id': 'r1',
        'x-other': 'no',
      });
      res.write('{"a":');
      res.end('1}');
    };
    const answer = await call();
    expect(answer.status).toBe(200);
    expect(answer.headers).toEqual({ 'content-type': 'application/json', 'x-request-id': 'r1' });
    expect((await readUpstreamBody(answer, 1024)).toString()).toBe('{"a":1}');
    expect(seen.authorization).toBe('Bearer sk-test');
    expect(seen.cookie).toBeUndefined();
  });

  it('refuses a whole body past the read cap with upstream_error', async () => {
    script = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`"${'x'.repeat(4096)}"`);
    };
    const answer = await call();
    const error = await readUpstreamBody(answer, 1000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcError);
    expect((error as SvcError).code).toBe('upstream_error');
    expect((error as SvcError).message).toMatch(/too large/);
  });

  it('delivers a large streamed body in order to a slow reader', async () => {
    const piece = Buffer.alloc(16 * 1024);
    const pieces = 128;
    script = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const next = () => {
        while (i < pieces) {
          piece.fill(i % 251);
          i++;
          if (!res.write(Buffer.from(piece))) return void res.once('drain', next);
        }
        res.end();
      };
      next();
    };
    const answer = await call();
    const received: Buffer[] = [];
    for await (const chunk of answer.body) {
      received.push(Buffer.from(chunk));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const all = Buffer.concat(received);
    expect(all.byteLength).toBe(piece.byteLength * pieces);
    for (let i = 0; i < pieces; i++) expect(all[i * piece.byteLength]).toBe(i % 251);
  });

  it('fails with the cancel reason when the buyer cancels before the head', async () => {
    script = () => undefined; // never answers
    const controller = new AbortController();
    const pending = call(controller.signal);
    const reason = new Error('buyer went away');
    setTimeout(() => controller.abort(reason), 20);
    await expect(pending).rejects.toBe(reason);
  });
});
