/**
 * Every upstream failure the seller maps, on the text and the media variant of its one pipeline:
 * the status and code the buyer sees, nothing billed, the provider slot freed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SellerConfig } from '../config/index.js';
import type { PeerId } from '../identity/index.js';
import { silentLogger } from '../log/index.js';
import type { MicroUsd } from '../money/index.js';
import type { InboundRequest, OutboundReply } from '../network/index.js';
import { createSellerHandler } from './handler.js';
import type { SellerPayments } from './payments.js';
import { runtimeProviders } from './startSeller.js';

const SELLER = '0x1111111111111111111111111111111111111111' as PeerId;
const BUYER = '0x2222222222222222222222222222222222222222' as PeerId;
const PRICE = { inputUsdPerMillion: 2, outputUsdPerMillion: 8 };

type Script = (req: IncomingMessage, res: ServerResponse) => void;

/** Answers each request with the script of the test. */
async function startVendor(): Promise<{
  url: string;
  script: (next: Script) => void;
  close(): Promise<void>;
}> {
  let current: Script = (_req, res) => res.writeHead(404).end();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => current(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    script: (next) => {
      current = next;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const status429: Script = (_req, res) =>
  res
    .writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' })
    .end('{"error":{"message":"slow down"}}');
const status500: Script = (_req, res) =>
  res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"boom"}}');
const malformedJson: Script = (_req, res) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"data": [');
const notAnObject: Script = (_req, res) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end('[1, 2]');
/** Declares a long body, sends a part, then drops the connection. */
const cutBody: Script = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
  res.write('{"data": [', () => setTimeout(() => res.destroy(), 20));
};

async function drain(reply: OutboundReply): Promise<{ text: string; error?: Error }> {
  if (reply.body instanceof Uint8Array) return { text: Buffer.from(reply.body).toString('utf8') };
  const chunks: Uint8Array[] = [];
  try {
    for await (const chunk of reply.body ?? []) chunks.push(chunk);
  } catch (error) {
    return { text: Buffer.concat(chunks).toString('utf8'), error: error as Error };
  }
  return { text: Buffer.concat(chunks).toString('utf8') };
}

describe('seller upstream failures (text and media, one mapping)', () => {
  let vendor: Awaited<ReturnType<typeof startVendor>>;
  let handle: (request: InboundRequest) => Promise<OutboundReply>;
  let providers: ReturnType<typeof runtimeProviders>;
  const recorded: MicroUsd[] = [];

  const send = (path: string, body: unknown) =>
    handle({
      peerId: BUYER,
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json' },
      body: new TextEncoder().encode(JSON.stringify(body)),
      signal: new AbortController().signal,
    });

  const requests = {
    text: ['/v1/chat/completions', { model: 'chat-1', messages: [] }],
    image: ['/v1/images/generations', { model: 'img-1', prompt: 'p', n: 1 }],
    decision: ['/v1/systemone', { model: 'judge-1', question: 'Is it?' }],
  } as const;

  beforeAll(async () => {
    vendor = await startVendor();
    const seller: SellerConfig = {
      displayName: 's',
      uploadLimitBytes: 1024 * 1024,
      providers: [
        {
          type: 'openai-chat',
          baseUrl: `${vendor.url}/v1`,
          services: { 'chat-1': { categories: [] } },
          defaultPricing: PRICE,
          maxConcurrency: 2,
        },
        {
          type: 'openai-images',
          baseUrl: `${vendor.url}/v1`,
          services: { 'img-1': { categories: [], imageUsd: 0.02 } },
          defaultPricing: PRICE,
          maxConcurrency: 2,
        },
        {
          type: 'systemone',
          baseUrl: `${vendor.url}/v1`,
          services: { 'judge-1': { categories: [] } },
          defaultPricing: PRICE,
          maxConcurrency: 2,
        },
      ],
    };
    providers = runtimeProviders(seller, {});
    const payments: SellerPayments = {
      admit: async () => {},
      record: async (_id, _usage, cost) => {
        recorded.push(cost);
      },
    };
    handle = createSellerHandler({
      sellerPeerId: SELLER,
      providers: () => providers,
      payments,
      onLoadChange: () => {},
      logger: silentLogger(),
    });
  });

  afterAll(() => vendor?.close());

  beforeEach(() => {
    recorded.length = 0;
  });

  const kinds = Object.keys(requests) as Array<keyof typeof requests>;

  it.each(kinds)(
    '%s: an upstream 429 is 429 seller_overloaded with its Retry-After',
    async (kind) => {
      vendor.script(status429);
      const [path, body] = requests[kind];
      const reply = await send(path, body);
      expect(reply.status).toBe(429);
      expect(reply.headers['retry-after']).toBe('7');
      const error = JSON.parse((await drain(reply)).text).error;
      expect(error.code).toBe('seller_overloaded');
      expect(error.message).toContain('upstream API is rate limiting');
      expect(recorded).toEqual([0n]);
      expect(providers.map((p) => p.load.active)).toEqual([0, 0, 0]);
    },
  );

  it.each(
    kinds.flatMap((kind) =>
      (
        [
          ['5xx', status500],
          ['malformed JSON', malformedJson],
          ['JSON that is not an object', notAnObject],
          ['a body cut midway', cutBody],
        ] as const
      ).map(([name, script]) => [kind, name, script] as const),
    ),
  )('%s: %s is 502 upstream_error, nothing billed, slot freed', async (kind, _name, script) => {
    vendor.script(script);
    const [path, body] = requests[kind];
    const reply = await send(path, body);
    expect(reply.status).toBe(502);
    expect(JSON.parse((await drain(reply)).text).error.code).toBe('upstream_error');
    expect(await reply.trailer?.()).toEqual({ error: 'upstream_error' });
    expect(recorded).toEqual([0n]);
    expect(providers.map((p) => p.load.active)).toEqual([0, 0, 0]);
  });

  it('text: a cancel frees the slot of a stream whose body was never read', async () => {
    vendor.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
    });
    const controller = new AbortController();
    const reply = await handle({
      peerId: BUYER,
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: new TextEncoder().encode(JSON.stringify({ model: 'chat-1', stream: true })),
      signal: controller.signal,
    });
    expect(reply.status).toBe(200);
    expect(providers[0]!.load.active).toBe(1);
    controller.abort(new Error('buyer went away before the reply head'));
    expect(providers[0]!.load.active).toBe(0);
    // What was delivered (nothing) is still recorded once when the trailer comes.
    expect(await reply.trailer?.(new Error('cancelled'))).toMatchObject({
      error: 'upstream_error: cancelled',
    });
    expect(recorded).toEqual([0n]);
  });

  it('text: a stream cut after its first bytes ends with an upstream_error trailer', async () => {
    vendor.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const first = { id: 'c1', model: 'm', choices: [{ index: 0, delta: { content: 'Hi' } }] };
      res.write(`data: ${JSON.stringify(first)}\n\n`, () => setTimeout(() => res.destroy(), 20));
    });
    const reply = await send('/v1/chat/completions', {
      model: 'chat-1',
      stream: true,
      messages: [],
    });
    expect(reply.status).toBe(200);
    const { text, error } = await drain(reply);
    expect(text).toContain('"Hi"');
    expect(error).toBeInstanceOf(Error);
    const trailer = await reply.trailer?.(error);
    expect(trailer?.error).toMatch(/^upstream_error: /);
    expect(trailer?.usage).toBeUndefined();
    expect(recorded).toEqual([0n]);
    expect(providers.map((p) => p.load.active)).toEqual([0, 0, 0]);
  });

  // The failed-answer rule, as the buyer applies it too (src/formats/failedAnswer.ts).
  const wholeAnswer =
    (finish: string | null): Script =>
    (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          model: 'chat-1',
          choices: [
            { index: 0, message: { role: 'assistant', content: '' }, finish_reason: finish },
          ],
          usage: { prompt_tokens: 1000, completion_tokens: 0, total_tokens: 1000 },
        }),
      );

  it('text: an answer with no output tokens and no finish reason bills nothing', async () => {
    vendor.script(wholeAnswer(null));
    const reply = await send(...requests.text);
    await drain(reply);
    expect((await reply.trailer?.())?.usage).toBeUndefined();
    expect(recorded).toEqual([0n]);
  });

  it('text: an empty answer that finished bills its input', async () => {
    vendor.script(wholeAnswer('stop'));
    const reply = await send(...requests.text);
    await drain(reply);
    expect((await reply.trailer?.())?.usage).toMatchObject({ inputTokens: 1000, outputTokens: 0 });
    // 1,000 input tokens at 2 USD per million.
    expect(recorded).toEqual([2000n]);
  });

  it('text: a stream that failed before any content bills nothing, even with usage reported', async () => {
    vendor.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const usage = {
        id: 'c1',
        model: 'm',
        choices: [],
        usage: { prompt_tokens: 1000, completion_tokens: 0, total_tokens: 1000 },
      };
      res.end(`data: ${JSON.stringify(usage)}\n\ndata: {"error":{"message":"boom"}}\n\n`);
    });
    const reply = await send('/v1/chat/completions', {
      model: 'chat-1',
      stream: true,
      messages: [],
    });
    await drain(reply);
    const trailer = await reply.trailer?.();
    expect(trailer?.usage).toBeUndefined();
    expect(trailer?.error).toMatch(/^upstream_error: /);
    expect(recorded).toEqual([0n]);
  });
});
