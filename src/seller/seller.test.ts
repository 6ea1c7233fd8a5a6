import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SellerConfig } from '../config/index.js';
import { SseDecoder } from '../formats/index.js';
import { costOfUsage, toPriceMicro } from '../money/index.js';
import {
  type BuyerNetwork,
  type LibP2pTransport,
  type NetworkPeerDirectory,
  type SellerResponse,
  type SvcNode,
  startBuyerNetwork,
  verifyReceipt,
} from '../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from '../network/testing/index.js';
import { type SellerHandle, startSeller } from './startSeller.js';
import { type FakeUpstream, startFakeUpstream } from './testing/fakeUpstreams.js';

const encoder = new TextEncoder();
const PRICE = { inputUsdPerMillion: 2, outputUsdPerMillion: 8, cachedInputUsdPerMillion: 1 };

async function text(response: SellerResponse): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function sellerConfig(upstream: FakeUpstream, overrides: Partial<SellerConfig> = {}): SellerConfig {
  return {
    displayName: 'test seller',
    uploadLimitBytes: 64 * 1024,
    providers: [
      {
        type: 'openai-chat',
        name: 'openai',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_OPENAI_KEY',
        services: { 'gpt-test': { upstreamModel: 'gpt-upstream-1', categories: ['chat'] } },
        defaultPricing: PRICE,
        maxConcurrency: 1,
      },
      {
        type: 'anthropic-messages',
        name: 'anthropic',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_ANTHROPIC_KEY',
        services: { 'claude-test': { upstreamModel: 'claude-upstream-1', categories: [] } },
        defaultPricing: PRICE,
        maxConcurrency: 4,
      },
      {
        type: 'openai-responses',
        name: 'openai-responses',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_OPENAI_KEY',
        services: { 'resp-test': { categories: [] } },
        defaultPricing: PRICE,
        maxConcurrency: 4,
      },
      {
        type: 'openai-images',
        name: 'images',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_OPENAI_KEY',
        services: { 'image-test': { upstreamModel: 'gpt-image-upstream', categories: ['image'] } },
        defaultPricing: PRICE,
        maxConcurrency: 2,
      },
      {
        type: 'demo',
        services: { 'demo-chat': { categories: ['demo'] } },
        defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
        maxConcurrency: 8,
      },
    ],
    ...overrides,
  };
}

describe('seller node', () => {
  let upstream: FakeUpstream;
  let bootstrap: SvcNode;
  let seller: SellerHandle;
  let directory: NetworkPeerDirectory;
  let transport: LibP2pTransport;
  let buyerNetwork: BuyerNetwork;
  const env = { FAKE_OPENAI_KEY: 'sk-seller-openai', FAKE_ANTHROPIC_KEY: 'sk-seller-anthropic' };

  const post = (
    path: string,
    body: unknown,
    extra: Record<string, string> = {},
    signal?: AbortSignal,
  ) =>
    transport.request(seller.node.peerId, {
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', ...extra },
      body: encoder.encode(JSON.stringify(body)),
      ...(signal ? { signal } : {}),
    });

  beforeAll(async () => {
    upstream = await startFakeUpstream({ text: 'alpha beta gamma', requireApiKey: undefined });
    bootstrap = await startLoopbackNode('bootstrap');
    const network = loopbackNetworkConfig({
      bootstrap: [bootstrap.multiaddrs()[0]!],
    });
    seller = await startSeller({
      identity: randomIdentity(),
      seller: sellerConfig(upstream),
      network,
      env,
    });
    buyerNetwork = await startBuyerNetwork({
      identity: randomIdentity(),
      config: loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] }),
    });
    ({ directory, transport } = buyerNetwork);
    await waitFor(
      async () => {
        await directory.refresh();
        return directory.get(seller.node.peerId)?.reachable;
      },
      30_000,
      'seller discovery',
    );
  });

  afterAll(async () => {
    await buyerNetwork?.stop();
    await seller?.stop();
    await bootstrap?.stop();
    await upstream?.close();
  });

  it('announces a signed record with every provider, protocols and the demo label', () => {
    const metadata = directory.get(seller.node.peerId)!.metadata;
    expect(metadata.capabilities).toMatchObject({ uploadLimitBytes: 64 * 1024, demo: true });
    expect(metadata.providers.map((p) => p.provider)).toEqual([
      'openai',
      'anthropic',
      'openai-responses',
      'images',
      'demo',
    ]);
    expect(metadata.providers[0]!.serviceApiProtocols).toEqual({
      'gpt-test': ['openai-chat-completions'],
    });
    expect(metadata.providers[4]!.serviceApiProtocols?.['demo-chat']).toEqual([
      'openai-chat-completions',
      'openai-responses',
      'anthropic-messages',
    ]);
  });

  it('relays a chat stream: model rewritten, client credentials stripped, own key added, usage billed', async () => {
    const response = await post(
      '/v1/chat/completions',
      { model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      {
        authorization: 'Bearer client-secret',
        cookie: 'a=b',
        'x-svc-buyer-identity': 'x',
        'x-api-key': 'k',
      },
    );
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('text/event-stream');
    const body = await text(response);
    const events = new SseDecoder().push(body);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const seen = upstream.requests.at(-1)!;
    expect(seen.path).toBe('/v1/chat/completions');
    expect(seen.body).toMatchObject({
      model: 'gpt-upstream-1',
      stream_options: { include_usage: true },
    });
    expect(seen.headers.authorization).toBe('Bearer sk-seller-openai');
    expect(seen.headers.cookie).toBeUndefined();
    expect(seen.headers['x-svc-buyer-identity']).toBeUndefined();
    expect(seen.headers['x-api-key']).toBeUndefined();
    const usage = { inputTokens: 12, cachedInputTokens: 4, outputTokens: 3 };
    const trailer = await response.trailer;
    const costMicroUsd = costOfUsage(usage, toPriceMicro(PRICE)).toString();
    expect(trailer).toMatchObject({ usage, costMicroUsd });
    // The receipt signs what went out, the claim, the service and the price applied.
    const exchange = response.exchange!()!;
    expect(
      verifyReceipt(trailer?.receipt, {
        seller: seller.node.peerId,
        buyer: buyerNetwork.node.peerId,
        serviceId: 'gpt-test',
        requestHash: exchange.requestHash,
        response: { status: 200, body: encoder.encode(body) },
        claims: { usage, costMicroUsd },
      }),
    ).toMatchObject({ ok: true });
    const price = toPriceMicro(PRICE);
    expect(trailer?.receipt).toMatchObject({
      inputMicroUsdPerMillion: price.inputMicroPerMillion.toString(),
      outputMicroUsdPerMillion: price.outputMicroPerMillion.toString(),
      unitMicroUsd: '0',
    });
  });

  it('counts Anthropic stream usage from message_start and message_delta', async () => {
    upstream.configure({ usage: { inputTokens: 100, cachedInputTokens: 60, outputTokens: 42 } });
    try {
      const response = await post('/v1/messages', {
        model: 'claude-test',
        max_tokens: 100,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      });
      const body = await text(response);
      expect(body).toContain('event: message_stop');
      expect(upstream.requests.at(-1)!.headers['x-api-key']).toBe('sk-seller-anthropic');
      expect(upstream.requests.at(-1)!.headers['anthropic-version']).toBe('2023-06-01');
      expect((await response.trailer)?.usage).toEqual({
        inputTokens: 100,
        cachedInputTokens: 60,
        outputTokens: 42,
      });
    } finally {
      upstream.configure({ usage: undefined });
    }
  });

  it('counts responses usage from JSON and from response.completed', async () => {
    const plain = await post('/v1/responses', { model: 'resp-test', input: 'hi' });
    expect(plain.status).toBe(200);
    const answer = JSON.parse(await text(plain));
    expect(answer).toMatchObject({ object: 'response', status: 'completed' });
    expect(answer.output[0].content[0]).toMatchObject({
      type: 'output_text',
      text: 'alpha beta gamma',
    });
    expect((await plain.trailer)?.usage).toEqual({
      inputTokens: 12,
      cachedInputTokens: 4,
      outputTokens: 3,
    });
    const streamed = await post('/v1/responses', { model: 'resp-test', input: 'hi', stream: true });
    expect(await text(streamed)).toContain('event: response.completed');
    expect((await streamed.trailer)?.usage).toEqual({
      inputTokens: 12,
      cachedInputTokens: 4,
      outputTokens: 3,
    });
  });

  it.each([
    ['/v1/chat/completions', false, '"object":"chat.completion"'],
    ['/v1/chat/completions', true, 'data: [DONE]'],
    ['/v1/responses', true, 'event: response.completed'],
    ['/v1/messages', false, '"type":"message"'],
    ['/v1/messages', true, 'event: message_stop'],
  ])('answers as the demo on %s (stream %s)', async (path, stream, marker) => {
    const body =
      path === '/v1/responses'
        ? { model: 'demo-chat', input: 'ping', stream }
        : {
            model: 'demo-chat',
            max_tokens: 50,
            stream,
            messages: [{ role: 'user', content: 'ping' }],
          };
    const response = await post(path, body);
    expect(response.status).toBe(200);
    const out = await text(response);
    expect(out).toContain(marker);
    expect(out).toContain('demo ');
    expect(out).toContain('\\"ping\\"');
    const trailer = await response.trailer;
    expect(trailer?.usage?.outputTokens).toBeGreaterThan(0);
    expect(trailer?.costMicroUsd).toBe('0');
  });

  it('relays image generations (JSON) and image edits (multipart, model rewritten in place)', async () => {
    const generated = await post('/v1/images/generations', {
      model: 'image-test',
      prompt: 'a cat',
      n: 2,
    });
    expect(generated.status).toBe(200);
    expect(JSON.parse(await text(generated)).data).toHaveLength(2);
    expect(upstream.requests.at(-1)!.body).toMatchObject({ model: 'gpt-image-upstream', n: 2 });
    expect((await generated.trailer)?.usage).toEqual({
      inputTokens: 12,
      cachedInputTokens: 0,
      outputTokens: 3,
    });

    const form = new FormData();
    form.append('model', 'image-test');
    form.append('prompt', 'add a hat');
    form.append(
      'image',
      new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 255, 13, 10])], { type: 'image/png' }),
      'cat.png',
    );
    const encoded = new Response(form);
    const bytes = new Uint8Array(await encoded.arrayBuffer());
    const edited = await transport.request(seller.node.peerId, {
      method: 'POST',
      path: '/v1/images/edits',
      headers: { 'content-type': encoded.headers.get('content-type')! },
      body: bytes,
    });
    expect(edited.status).toBe(200);
    await text(edited);
    const seen = upstream.requests.at(-1)!;
    expect(seen.path).toBe('/v1/images/edits');
    expect(String(seen.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
    const raw = seen.rawBody.toString('latin1');
    expect(raw).toContain('gpt-image-upstream');
    expect(raw).not.toContain('image-test');
    expect(seen.rawBody.includes(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255, 13, 10]))).toBe(true);
  });

  it('refuses paths outside the allow-list and models it does not offer', async () => {
    const path = await post('/v1/embeddings', { model: 'gpt-test', input: 'x' });
    expect(path.status).toBe(404);
    await text(path);
    const model = await post('/v1/chat/completions', { model: 'nope', messages: [] });
    expect(model.status).toBe(404);
    expect(JSON.parse(await text(model)).error.code).toBe('service_not_offered');
    const garbage = await transport.request(seller.node.peerId, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: {},
      body: encoder.encode('{not json'),
    });
    expect(garbage.status).toBe(400);
    await text(garbage);
  });

  it('turns upstream 500, malformed JSON and a cut stream into clean errors', async () => {
    upstream.configure({ fault: 'status500' });
    const failed = await post('/v1/chat/completions', { model: 'gpt-test', messages: [] });
    expect(failed.status).toBe(502);
    expect(JSON.parse(await text(failed)).error.code).toBe('upstream_error');
    expect((await failed.trailer)?.error).toBe('upstream_error');

    upstream.configure({ fault: 'malformed-json' });
    const malformed = await post('/v1/chat/completions', { model: 'gpt-test', messages: [] });
    expect(malformed.status).toBe(502);
    await text(malformed);

    upstream.configure({ fault: 'broken-sse' });
    const cut = await post('/v1/chat/completions', {
      model: 'gpt-test',
      stream: true,
      messages: [],
    });
    expect(cut.status).toBe(200);
    await text(cut);
    expect((await cut.trailer)?.error).toMatch(/^upstream_error: /);

    upstream.configure({ fault: 'status400' });
    const bad = await post('/v1/chat/completions', { model: 'gpt-test', messages: [] });
    expect(bad.status).toBe(400);
    expect(JSON.parse(await text(bad)).error.message).toContain('temperature');
    upstream.configure({ fault: 'none' });
  });

  it.each([
    ['/v1/chat/completions', 'gpt-test', { messages: [] }],
    ['/v1/responses', 'resp-test', { input: 'hi' }],
    ['/v1/messages', 'claude-test', { max_tokens: 10, messages: [] }],
  ])(
    'ends a stream %s that fails after its first bytes with an upstream_error trailer, never a clean one',
    async (path, model, extra) => {
      try {
        for (const fault of ['broken-sse', 'malformed-json'] as const) {
          upstream.configure({ fault });
          const response = await post(path, { model, stream: true, ...extra });
          expect(response.status).toBe(200);
          const body = await text(response);
          expect(body.length).toBeGreaterThan(0);
          const trailer = await response.trailer;
          expect(trailer?.error, fault).toMatch(/^upstream_error: /);
          if (fault === 'malformed-json') expect(trailer?.error).toContain('malformed stream');
        }
      } finally {
        upstream.configure({ fault: 'none' });
      }
    },
  );

  it('enforces maxConcurrency with 429 + Retry-After, publishes the load, and cancels upstream on abort', async () => {
    upstream.configure({ fault: 'hang-after-first-chunk' });
    const controller = new AbortController();
    const before = upstream.requests.length;
    const first = await post(
      '/v1/chat/completions',
      { model: 'gpt-test', stream: true, messages: [] },
      {},
      controller.signal,
    );
    const iterator = first.body[Symbol.asyncIterator]();
    await iterator.next();
    const second = await post('/v1/chat/completions', { model: 'gpt-test', messages: [] });
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBe('1');
    await text(second);

    await waitFor(() => seller.metadata().providers[0]!.currentLoad === 1, 5_000, 'load re-signed');
    await directory.refresh();
    expect(directory.get(seller.node.peerId)!.metadata.providers[0]!.currentLoad).toBe(1);

    controller.abort();
    await expect(iterator.next()).rejects.toMatchObject({ failure: 'cancelled' });
    const upstreamCall = upstream.requests[before]!;
    await upstreamCall.done;
    expect(upstreamCall.closedEarly).toBe(true);
    await waitFor(() => seller.loads()[0] === 0, 5_000, 'load released');
    upstream.configure({ fault: 'none' });
  });

  it('shows a price change to buyers after a refresh', async () => {
    const config = sellerConfig(upstream);
    config.providers[4]!.defaultPricing = { inputUsdPerMillion: 0.5, outputUsdPerMillion: 1.5 };
    await seller.updateConfig(config);
    await directory.refresh();
    expect(directory.get(seller.node.peerId)!.metadata.providers[4]!.defaultPricing).toEqual({
      inputUsdPerMillion: 0.5,
      outputUsdPerMillion: 1.5,
    });
  });

  it('refuses a body above the advertised upload limit before sending it', async () => {
    const error = await post('/v1/chat/completions', {
      model: 'gpt-test',
      pad: 'x'.repeat(70 * 1024),
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ failure: 'too_large', beforeHead: true });
  });

  it('will not start without the upstream key variable', async () => {
    await expect(
      startSeller({
        identity: randomIdentity(),
        seller: sellerConfig(upstream),
        network: loopbackNetworkConfig(),
        env: {},
      }),
    ).rejects.toThrow(/FAKE_OPENAI_KEY \(apiKeyEnv\) is not set/);
  });
});
