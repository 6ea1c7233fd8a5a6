/** What the buyer's proxy answers to bad input, in each client's error style. */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHEAP, startFourSellerBuyer } from './testing/fourSellers.js';
import { type ErrorBody, readJson } from './testing/readJson.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer;

beforeAll(async () => {
  t = await startFourSellerBuyer();
});
afterAll(() => t.stop());

describe('bad input', () => {
  const post = (
    path: string,
    body: string,
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ) => fetch(`${t.url}${path}`, { method: 'POST', headers, body });

  it('answers malformed JSON with 400 and the parse position, in the client style', async () => {
    const response = await post('/v1/chat/completions', '{"model": "gpt-4o",, }');
    expect(response.status).toBe(400);
    const body = await readJson<ErrorBody>(response);
    expect(body.error.code).toBe('invalid_json');
    expect(body.error.position).toBe(19);
    const anthropicStyle = await readJson<ErrorBody>(await post('/v1/messages', '{'));
    expect(anthropicStyle.type).toBe('error');
    expect(anthropicStyle.error.code).toBe('invalid_json');
  });

  it('answers a wrong content type with 415', async () => {
    const response = await post('/v1/chat/completions', 'model=gpt-4o', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(response.status).toBe(415);
    expect((await readJson<ErrorBody>(response)).error.code).toBe('unsupported_media_type');
  });

  it('answers unknown paths with JSON 404', async () => {
    const response = await fetch(`${t.url}/v1/embeddings`);
    expect(response.status).toBe(404);
    expect((await readJson<ErrorBody>(response)).error.code).toBe('not_found');
  });

  it('refuses a non-loopback Host or Origin (DNS rebinding)', async () => {
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${t.url}/_svc/status`, { headers }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await status({ host: 'evil.example.com' })).toBe(403);
    expect(await status({ host: 'localhost:8377', origin: 'https://evil.example.com' })).toBe(403);
    expect(await status({ host: 'localhost:8377', origin: 'http://localhost:3000' })).toBe(200);
    // Host headers are judged once and remembered: the same answers the next times.
    for (const host of [
      'localhost:8377',
      'evil.example.com',
      '127.0.0.1:8377',
      'evil.example.com',
    ]) {
      expect(await status({ host })).toBe(host.startsWith('evil') ? 403 : 200);
    }
  });

  it('answers 413 while reading a chunked body that grows past the cap', async () => {
    const small = await startTestBuyer({ config: { bodyLimitBytes: 1000 } });
    try {
      const chunks = Array.from({ length: 50 }, () => new TextEncoder().encode('x'.repeat(100)));
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      });
      const response = await fetch(`${small.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(response.status).toBe(413);
    } finally {
      await small.stop();
    }
  });

  it('never forwards credentials, cookies or svc headers to sellers', async () => {
    await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer sk-secret-client-key-000000000000',
        'x-api-key': 'sk-ant-secret',
        cookie: 'session=abc',
        'x-svc-end-user': 'alice',
        'x-svc-buyer-identity': 'default',
        'x-custom-trace': 'kept',
      },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const headers = t.network.callsTo(CHEAP).at(-1)!.request.headers;
    expect(headers.authorization).toBeUndefined();
    expect(headers['x-api-key']).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
    expect(Object.keys(headers).some((name) => name.startsWith('x-svc-'))).toBe(false);
    expect(headers['x-custom-trace']).toBe('kept');
  });

  it('answers 413 from the declared length before reading the body', async () => {
    const small = await startTestBuyer({ config: { bodyLimitBytes: 100 } });
    try {
      const response = await fetch(`${small.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'x',
          messages: [{ role: 'user', content: 'x'.repeat(500) }],
        }),
      });
      expect(response.status).toBe(413);
      expect((await readJson<ErrorBody>(response)).error.code).toBe('body_too_large');
    } finally {
      await small.stop();
    }
  });

  it('refuses a model of the wrong type for the route', async () => {
    const response = await post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'gpt-image-1', messages: [] }),
    );
    expect(response.status).toBe(400);
    expect((await readJson<ErrorBody>(response)).error.code).toBe('model_type_mismatch');
  });

  it('answers missing_routing_target without a model', async () => {
    const response = await post('/v1/chat/completions', JSON.stringify({ messages: [] }));
    expect(response.status).toBe(400);
    expect((await readJson<ErrorBody>(response)).error.code).toBe('missing_routing_target');
  });
});
