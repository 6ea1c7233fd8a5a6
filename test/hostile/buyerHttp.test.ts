/**
 * Hostile input at the buyer's HTTP ingress: every case gets a clear error code from the error
 * table (or a correct answer), reaches no seller when refused, and leaves the buyer answering
 * another client.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatCompletion } from '../../src/buyer/testing/sellerReplies.js';
import { startTestBuyer, type TestBuyer } from '../../src/buyer/testing/testBuyer.js';
import { answersAnotherClient, postBytes, rawRequest } from './rawHttp.js';

const BODY_LIMIT = 2 * 1024 * 1024;
let t: TestBuyer;

beforeAll(async () => {
  t = await startTestBuyer({ config: { bodyLimitBytes: BODY_LIMIT }, payments: 'unpaid-dev' });
  t.network.addSeller(
    {
      peerId: 'chat',
      services: [
        { id: 'gpt-4o', pricing: { inputUsdPerMillion: 2.5, outputUsdPerMillion: 10 } },
        {
          id: 'claude-sonnet-4',
          pricing: { inputUsdPerMillion: 3, outputUsdPerMillion: 15 },
          protocols: ['anthropic-messages'],
        },
      ],
    },
    (call) => chatCompletion(call, 'ok'),
  );
});

afterAll(async () => {
  await t?.stop();
});

const ROUTES = [
  '/v1/chat/completions',
  '/v1/responses',
  '/v1/messages',
  '/v1/messages/count_tokens',
];

/** Sends `body` to `path`, asserts status and code, that no seller was called, and liveness. */
async function refused(path: string, body: Buffer | string, status: number, code: string) {
  const calls = t.network.calls.length;
  const response = await rawRequest(t.url, postBytes(path, body));
  expect([path, response.status, response.code]).toEqual([path, status, code]);
  expect(t.network.calls.length).toBe(calls);
  expect(await answersAnotherClient(t.url, '/v1/models')).toBe(true);
}

function nested(depth: number, open: string, close: string, inner = '1'): string {
  return `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
}

describe('buyer HTTP: malformed and non-object JSON', () => {
  it.each(ROUTES)('%s: malformed JSON is 400 invalid_json', async (path) => {
    await refused(path, '{"model": "gpt-4o", "messages": [', 400, 'invalid_json');
  });

  it.each(ROUTES)('%s: JSON that is not an object is 400 invalid_json', async (path) => {
    for (const body of ['[]', '42', '"text"', 'null', 'true', '[{"model":"gpt-4o"}]'])
      await refused(path, body, 400, 'invalid_json');
  });

  it('any byte string at all gets a 4xx with a code, never a 5xx (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.json({ maxDepth: 4 })),
        async (path, body) => {
          const response = await rawRequest(t.url, postBytes(path, body));
          expect(response.status).toBeGreaterThanOrEqual(200);
          expect(response.status).toBeLessThan(500);
          if (response.status >= 400) expect(response.code).toMatch(/^[a-z_]+$/);
        },
      ),
      { numRuns: 60 },
    );
    expect(await answersAnotherClient(t.url, '/v1/models')).toBe(true);
  });
});

describe('buyer HTTP: deep nesting and huge arrays', () => {
  it.each(ROUTES)('%s: 100k-deep arrays and objects are 400 invalid_request', async (path) => {
    await refused(
      path,
      `{"model":"gpt-4o","messages":${nested(100_000, '[', ']')}}`,
      400,
      'invalid_request',
    );
    await refused(
      path,
      `{"model":"gpt-4o","metadata":${nested(100_000, '{"a":', '}')}}`,
      400,
      'invalid_request',
    );
  });

  it('a 200,000-element array of non-messages is 400 invalid_request naming the field', async () => {
    const body = `{"model":"gpt-4o","messages":[${Array(200_000).fill('7').join(',')}]}`;
    for (const path of ROUTES) await refused(path, body, 400, 'invalid_request');
  });

  it('count_tokens answers a 50,000-message conversation', async () => {
    const messages = Array.from({ length: 50_000 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: 'hi',
    }));
    const response = await fetch(`${t.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4', messages }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { input_tokens: number }).input_tokens).toBe(50_000 * 4 + 3);
    expect(await answersAnotherClient(t.url, '/v1/models')).toBe(true);
  });
});

describe('buyer HTTP: long whitespace-free text', () => {
  it('count_tokens counts a megabyte of whitespace-free text and of base64 while other clients are answered', async () => {
    for (const text of ['x'.repeat(1024 * 1024), Buffer.alloc(786_432, 7).toString('base64')]) {
      const counting = fetch(`${t.url}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-sonnet-4',
          messages: [{ role: 'user', content: text }],
        }),
      });
      expect(await answersAnotherClient(t.url, '/v1/models')).toBe(true);
      const response = await counting;
      expect(response.status).toBe(200);
      const { input_tokens } = (await response.json()) as { input_tokens: number };
      expect(input_tokens).toBeGreaterThan(text.length / 10);
    }
  });

  it('a chat request carrying 64 KB of whitespace-free text is answered', async () => {
    const response = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'q'.repeat(64 * 1024) }],
      }),
    });
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('x-svc-input-tokens'))).toBeGreaterThan(0);
  });
});

describe('buyer HTTP: invalid UTF-8', () => {
  it.each(ROUTES)('%s: a body that is not UTF-8 is 400 invalid_json', async (path) => {
    const body = Buffer.concat([
      Buffer.from('{"model":"gpt-4o","messages":[{"role":"user","content":"'),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
      Buffer.from('"}]}'),
    ]);
    await refused(path, body, 400, 'invalid_json');
  });
});

describe('buyer HTTP: bodies just over the cap', () => {
  it.each(ROUTES)(
    '%s: one byte over the cap is 413 body_too_large, by header or by count',
    async (path) => {
      const over = `{"model":"gpt-4o","x":"${'a'.repeat(BODY_LIMIT - 24)}"}`;
      expect(Buffer.byteLength(over)).toBe(BODY_LIMIT + 1);
      await refused(path, over, 413, 'body_too_large');
      // Chunked (no Content-Length): counted as it arrives.
      const calls = t.network.calls.length;
      const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
      const chunk = `${Buffer.byteLength(over).toString(16)}\r\n${over}\r\n0\r\n\r\n`;
      const response = await rawRequest(t.url, head + chunk);
      expect([response.status, response.code]).toEqual([413, 'body_too_large']);
      expect(t.network.calls.length).toBe(calls);
    },
  );

  it('exactly at the cap is not refused for its size', async () => {
    const at = `{"model":"gpt-4o","x":"${'a'.repeat(BODY_LIMIT - 25)}"}`;
    expect(Buffer.byteLength(at)).toBe(BODY_LIMIT);
    const response = await rawRequest(t.url, postBytes('/v1/messages/count_tokens', at));
    expect(response.status).not.toBe(413);
  });
});

describe('buyer HTTP: framing attacks', () => {
  it('Content-Length with Transfer-Encoding (request smuggling) is refused and smuggles nothing', async () => {
    const calls = t.network.calls.length;
    const smuggled = `{"model":"gpt-4o","messages":[{"role":"user","content":"smuggled"}]}`;
    const payload =
      'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n` +
      `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`;
    const response = await rawRequest(t.url, payload, { timeoutMs: 3_000 });
    expect(response.status).toBe(400);
    expect(response.code).toBe('invalid_request');
    expect(t.network.calls.length).toBe(calls);
    expect(await answersAnotherClient(t.url, '/v1/models')).toBe(true);
  });

  it('a header flood is 431 headers_too_large', async () => {
    const flood = Array.from(
      { length: 4_000 },
      (_, i) => `x-flood-${i}: ${'v'.repeat(20)}\r\n`,
    ).join('');
    const response = await rawRequest(t.url, postBytes('/v1/chat/completions', '{}', flood), {
      timeoutMs: 5_000,
    });
    expect([response.status, response.code]).toEqual([431, 'headers_too_large']);
    expect(await answersAnotherClient(t.url, '/v1/models')).toBe(true);
  });

  it('a slowly trickled body does not hold other clients up', async () => {
    const calls = t.network.calls.length;
    const body = '{"model":"gpt-4o","messages":[{"role":"user","content":"slow"}]'; // never closed
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 1}\r\nConnection: close\r\n\r\n`;
    const pieces = [...body].map((char) => Buffer.from(char));
    const trickling = rawRequest(t.url, head, { trickle: pieces, trickleMs: 15, timeoutMs: 2_500 });
    for (let i = 0; i < 5; i++) expect(await answersAnotherClient(t.url, '/v1/models')).toBe(true);
    await trickling;
    expect(t.network.calls.length).toBe(calls);
  });
});

describe('buyer HTTP: odd model names', () => {
  it.each([
    ['a path', '../../etc/passwd', 'model_not_found'],
    ['a NUL', 'gpt-4o\u0000', 'model_not_found'],
    ['10 KB', 'm'.repeat(10_240), 'model_not_found'],
    ['a path as peer id', '../@gpt-4o', 'model_not_found'],
  ])('a model name with %s is refused with a clear code', async (_label, model, code) => {
    const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] });
    const calls = t.network.calls.length;
    const response = await rawRequest(t.url, postBytes('/v1/chat/completions', body));
    expect(response.code).toBe(code);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(600);
    expect(t.network.calls.length).toBe(calls);
  });

  it('GET /v1/models/<odd id> is 404 not_found', async () => {
    for (const id of ['..%2F..%2Fetc', '%00', 'm'.repeat(10_240), '%E0%A4%A']) {
      const response = await rawRequest(
        t.url,
        `GET /v1/models/${id} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      );
      expect([id.slice(0, 20), response.status]).toEqual([id.slice(0, 20), 404]);
      expect(response.code).toMatch(/^(not_found|model_not_found)$/);
    }
  });
});
