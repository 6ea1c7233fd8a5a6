/**
 * A seller node's limits and faults: images, paths and models it refuses, upstream failures
 * turned into clean errors, its concurrency limit, price changes, its upload limit and its keys.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LibP2pTransport, NetworkPeerDirectory } from '../network/index.js';
import { loopbackNetworkConfig, randomIdentity, waitFor } from '../network/testing/index.js';
import { type SellerHandle, startSeller } from './startSeller.js';
import type { FakeUpstream } from './testing/fakeUpstreams.js';
import { sellerConfig, sellerMarket, text } from './testing/sellerMarket.js';

const encoder = new TextEncoder();
const market = sellerMarket();
let upstream: FakeUpstream;
let seller: SellerHandle;
let directory: NetworkPeerDirectory;
let transport: LibP2pTransport;
beforeAll(() => {
  ({ upstream, seller, directory, transport } = market);
});
const post: typeof market.post = (...args) => market.post(...args);

describe('seller node, limits and faults', () => {
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
