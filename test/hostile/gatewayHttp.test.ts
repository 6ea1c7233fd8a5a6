/**
 * Hostile input at the gateway's HTTP ingress: a clear error code from the error table, nothing
 * forwarded or charged (budget counters and ledger unchanged), and the gateway still answering
 * another key holder.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../src/gateway/testing/harness.js';
import { waitFor } from '../../src/testing/index.js';
import { answersAnotherClient, postBytes, rawRequest } from './rawHttp.js';

const BODY_LIMIT = 1024 * 1024;
let h: Harness;
let keyId: string;
let secret: string;

beforeAll(async () => {
  h = await startHarness({ gateway: { bodyLimitBytes: BODY_LIMIT } });
  const created = await h.key({ limits: { total: 5_000_000n } });
  keyId = created.key.id;
  secret = created.secret;
});

afterAll(async () => {
  await h?.stop();
});

const ROUTES = [
  '/v1/chat/completions',
  '/v1/responses',
  '/v1/messages',
  '/v1/messages/count_tokens',
];

async function moneyState() {
  return {
    usage: await h.store.keyUsage(keyId),
    ledger: await h.store.ledgerTotal(keyId),
    spend: await h.store.periodSpend('key', keyId, Date.now()),
    forwarded: h.buyer.received.filter((request) => request.method === 'POST').length,
  };
}

function auth(extra = ''): string {
  return `Authorization: Bearer ${secret}\r\n${extra}`;
}

/** Sends raw bytes; asserts status and code, that nothing moved, and that others are answered. */
async function refused(payload: Buffer | string, status: number, code: string) {
  const before = await moneyState();
  const response = await rawRequest(h.gateway.url, payload, { timeoutMs: 5_000 });
  expect([response.status, response.code]).toEqual([status, code]);
  expect(await moneyState()).toEqual(before);
  expect(
    await answersAnotherClient(h.gateway.url, '/v1/models', { authorization: `Bearer ${secret}` }),
  ).toBe(true);
}

describe('gateway HTTP: bodies', () => {
  it.each(ROUTES)('%s: malformed JSON is 400 invalid_json', async (path) => {
    await refused(postBytes(path, '{"model":"m","messages":[', auth()), 400, 'invalid_json');
  });

  it.each(ROUTES)('%s: JSON that is not an object is 400 invalid_json', async (path) => {
    for (const body of ['[]', '7', '"s"', 'null', 'false'])
      await refused(postBytes(path, body, auth()), 400, 'invalid_json');
  });

  it.each(ROUTES)('%s: 100k-deep nesting is 400 invalid_request', async (path) => {
    const deep = `{"model":"m","messages":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    await refused(postBytes(path, deep, auth()), 400, 'invalid_request');
  });

  it.each(ROUTES)('%s: a body that is not UTF-8 is 400 invalid_json', async (path) => {
    const body = Buffer.concat([
      Buffer.from('{"model":"m","messages":[{"role":"user","content":"'),
      Buffer.from([0xc0, 0xaf, 0xff]),
      Buffer.from('"}]}'),
    ]);
    await refused(postBytes(path, body, auth()), 400, 'invalid_json');
  });

  it.each(ROUTES)('%s: one byte over the body cap is 413 body_too_large', async (path) => {
    const over = `{"model":"m","x":"${'a'.repeat(BODY_LIMIT - 19)}"}`;
    expect(Buffer.byteLength(over)).toBe(BODY_LIMIT + 1);
    await refused(postBytes(path, over, auth()), 413, 'body_too_large');
  });

  it('any bytes at all get a 4xx with a code and move no money (property)', async () => {
    const before = await moneyState();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 200 }).filter((s) => !s.trim().startsWith('{')),
          fc.constantFrom('[', '{"model":', '\u0000', '{}}', '[1,2'),
        ),
        async (path, body) => {
          const response = await rawRequest(h.gateway.url, postBytes(path, body, auth()));
          expect(response.status).toBeGreaterThanOrEqual(400);
          expect(response.status).toBeLessThan(500);
          expect(response.code).toMatch(/^[a-z_]+$/);
        },
      ),
      { numRuns: 50 },
    );
    expect(await moneyState()).toEqual(before);
  });
});

describe('gateway HTTP: framing and headers', () => {
  it('Content-Length with Transfer-Encoding is 400 invalid_request and forwards nothing', async () => {
    const inner = '{"model":"m","messages":[{"role":"user","content":"smuggled"}]}';
    await refused(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth()}Content-Type: application/json\r\n` +
        `Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n` +
        `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${inner.length}\r\n\r\n${inner}`,
      400,
      'invalid_request',
    );
  });

  it('a header flood is 431 headers_too_large', async () => {
    const flood = Array.from({ length: 3_000 }, (_, i) => `x-f-${i}: ${'z'.repeat(16)}\r\n`).join(
      '',
    );
    await refused(postBytes('/v1/chat/completions', '{}', auth(flood)), 431, 'headers_too_large');
  });

  it('a megabyte bearer token is 431 headers_too_large, a 10 KB one 401', async () => {
    const huge = `Authorization: Bearer svc_${'k'.repeat(1024 * 1024)}\r\n`;
    await refused(postBytes('/v1/chat/completions', '{}', huge), 431, 'headers_too_large');
    const long = `Authorization: Bearer svc_${'k'.repeat(10_240)}\r\n`;
    await refused(postBytes('/v1/chat/completions', '{}', long), 401, 'unauthorized');
  });

  it('a slowly trickled body does not hold other key holders up', async () => {
    const before = await moneyState();
    const body = '{"model":"m","messages":[{"role":"user","content":"slow"}]}';
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${body.length + 5}\r\nConnection: close\r\n\r\n`;
    const trickling = rawRequest(h.gateway.url, head, {
      trickle: [...body].map((char) => Buffer.from(char)),
      trickleMs: 15,
      timeoutMs: 2_000,
    });
    for (let i = 0; i < 5; i++) {
      expect(
        await answersAnotherClient(h.gateway.url, '/v1/models', {
          authorization: `Bearer ${secret}`,
        }),
      ).toBe(true);
    }
    await trickling;
    expect(await moneyState()).toEqual(before);
  });
});

describe('gateway HTTP: odd model names', () => {
  it.each([
    ['a path', '../../etc/passwd'],
    ['a NUL', 'model\u0000'],
    ['10 KB', 'm'.repeat(10_240)],
  ])(
    'a model name with %s is forwarded as data and charged only what the buyer bills',
    async (_label, model) => {
      const before = await moneyState();
      const response = await h.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      // The stub buyer bills 0.000100 for any answer: exactly that moves, once.
      await waitFor(
        async () => (await h.store.keyUsage(keyId)).requests === before.usage.requests + 1,
      );
      expect(await h.store.ledgerTotal(keyId)).toBe(before.ledger + 100n);
      const forwarded = h.buyer.received.at(-1);
      expect((JSON.parse(forwarded?.body ?? '{}') as { model?: string }).model).toBe(model);
    },
  );
});
