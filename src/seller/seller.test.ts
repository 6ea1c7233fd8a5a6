/**
 * A seller node as buyers see it: its signed record, and chat, messages and responses relayed
 * with the model rewritten, credentials replaced, usage counted and receipts signed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SseDecoder } from '../formats/index.js';
import { costOfUsage, toPriceMicro } from '../money/index.js';
import { type BuyerNetwork, type NetworkPeerDirectory, verifyReceipt } from '../network/index.js';
import type { SellerHandle } from './startSeller.js';
import type { FakeUpstream } from './testing/fakeUpstreams.js';
import { PRICE, sellerMarket, text } from './testing/sellerMarket.js';

const encoder = new TextEncoder();
const market = sellerMarket();
let upstream: FakeUpstream;
let seller: SellerHandle;
let directory: NetworkPeerDirectory;
let buyerNetwork: BuyerNetwork;
beforeAll(() => {
  ({ upstream, seller, directory, buyerNetwork } = market);
});
const post: typeof market.post = (...args) => market.post(...args);

describe('seller node', () => {
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
});
