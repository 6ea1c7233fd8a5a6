import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogEntry } from '../catalog/index.js';
import { CHEAP, CLAUDE, DEAR, IMAGES, startFourSellerBuyer } from './testing/fourSellers.js';
import { type ErrorBody, type ModelList, readJson } from './testing/readJson.js';
import type { TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  t = await startFourSellerBuyer();
  openai = new OpenAI({ apiKey: 'placeholder', baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: 'placeholder', baseURL: t.url, maxRetries: 0 });
});
afterAll(() => t.stop());

describe('buyer proxy with the official SDKs', () => {
  it('routes a chat completion to the cheapest seller and reports everything in headers', async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: 'GPT-4o', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('hi from cheap');
    const h = response.headers;
    expect(h.get('x-svc-request-id')).toMatch(/^req_/);
    expect(h.get('x-svc-peer-id')).toBe(CHEAP);
    expect(h.get('x-svc-provider')).toBe('openai-chat');
    expect(h.get('x-svc-service')).toBe('gpt-4o-2024-08-06');
    expect(h.get('x-svc-input-tokens')).toBe('12');
    expect(h.get('x-svc-cached-input-tokens')).toBe('0');
    expect(h.get('x-svc-output-tokens')).toBe('5');
    expect(h.get('x-svc-total-tokens')).toBe('17');
    expect(h.get('x-svc-token-source')).toBe('usage');
    // 12 * 2.5 + 5 * 10 = 80 micro-USD per million -> 0.000080
    expect(h.get('x-svc-estimated-cost-usd')).toBe('0.000080');
    expect(h.get('x-svc-input-usd-per-million')).toBe('2.5');
    expect(h.get('x-svc-output-usd-per-million')).toBe('10');
    expect(h.get('x-svc-cached-input-usd-per-million')).toBe('1.25');
    expect(Number(h.get('x-svc-latency-ms'))).toBeGreaterThanOrEqual(0);
    expect(h.get('x-svc-peer-reputation')).toBe('80');
    // The seller got its own service id, and no client credentials or svc headers.
    const call = t.network.callsTo(CHEAP).at(-1)!;
    expect(call.json.model).toBe('gpt-4o-2024-08-06');
    expect(call.request.path).toBe('/v1/chat/completions');
    expect(call.request.headers.authorization).toBeUndefined();
    expect(Object.keys(call.request.headers).filter((name) => name.startsWith('x-svc-'))).toEqual(
      [],
    );
  });

  it("relays a body it does not change as the client's bytes, not re-encoded", async () => {
    const text =
      '{ "model": "gpt-4o-2024-08-06",\n  "messages": [{"role":"user","content":"caf\\u00e9"}] }';
    const response = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: text,
    });
    expect(response.status).toBe(200);
    await response.text();
    const call = t.network.callsTo(CHEAP).at(-1)!;
    expect(new TextDecoder().decode(call.request.body)).toBe(text);
  });

  it('keeps a request record the gateway can read', async () => {
    const { response } = await openai.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const id = response.headers.get('x-svc-request-id')!;
    const record = await readJson<unknown>(await fetch(`${t.url}/_svc/requests/${id}`));
    expect(record).toMatchObject({
      requestId: id,
      status: 200,
      completed: true,
      streamed: false,
      peerId: CHEAP,
      serviceId: 'gpt-4o-2024-08-06',
      usage: { inputTokens: 12, cachedInputTokens: 0, outputTokens: 5 },
      costUsd: '0.000080',
    });
    expect((await fetch(`${t.url}/_svc/requests/req_missing`)).status).toBe(404);
  });

  it('streams with seller headers and ends with the svc-usage comment', async () => {
    const stream = await openai.chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello');

    const raw = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o',
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(raw.headers.get('content-type')).toContain('text/event-stream');
    expect(raw.headers.get('x-svc-peer-id')).toBe(CHEAP);
    expect(raw.headers.get('x-svc-input-usd-per-million')).toBe('2.5');
    expect(raw.headers.get('x-svc-request-id')).toMatch(/^req_/);
    expect(raw.headers.get('x-svc-output-tokens')).toBeNull();
    const body = await raw.text();
    expect(body.trimEnd().split('\n').at(-1)).toBe(
      ': svc-usage {"inputTokens":9,"cachedInputTokens":0,"outputTokens":2,"costUsd":"0.000043"}',
    );
  });

  it('serves the messages API to the Anthropic SDK', async () => {
    const { data, response } = await anthropic.messages
      .create({
        model: 'claude-sonnet-4',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    expect(data.content[0]).toEqual({ type: 'text', text: 'hello from claude' });
    expect(response.headers.get('x-svc-peer-id')).toBe(CLAUDE);
    expect(response.headers.get('x-svc-input-tokens')).toBe('24');
    expect(response.headers.get('x-svc-cached-input-tokens')).toBe('4');
    expect(t.network.callsTo(CLAUDE).at(-1)!.json.model).toBe('claude-sonnet-4-20250514');
  });

  it('counts tokens locally without calling a seller', async () => {
    const before = t.network.calls.length;
    const result = await anthropic.messages.countTokens({
      model: 'claude-sonnet-4',
      messages: [{ role: 'user', content: 'Hello, world' }],
    });
    expect(result.input_tokens).toBeGreaterThan(2);
    expect(result.input_tokens).toBeLessThan(20);
    expect(t.network.calls.length).toBe(before);
  });

  it('lists the catalog in the OpenAI list shape, filtered by type', async () => {
    const page = await openai.models.list();
    const ids = page.data.map((model) => model.id);
    expect(ids).toEqual(['claude-sonnet-4', 'gpt-4o', 'gpt-image-1']);
    const gpt = (await readJson<ModelList>(await fetch(`${t.url}/v1/models`))).data[1]!;
    expect(gpt.peers.map((p) => p.peerId)).toEqual([CHEAP, DEAR]);
    expect(gpt.context_length).toBe(64_000);
    expect(gpt.aliases).toEqual(['gpt-4o-2024-08-06', 'openai/gpt-4o']);
    const images = await readJson<ModelList>(await fetch(`${t.url}/v1/models?type=images`));
    expect(images.data.map((m) => m.id)).toEqual(['gpt-image-1']);
    expect(images.data[0]!.peers[0]!.peerId).toBe(IMAGES);
    const one = await readJson<CatalogEntry>(
      await fetch(`${t.url}/v1/models/openai%2Fgpt-4o-2024-08-06`),
    );
    expect(one.id).toBe('gpt-4o');
    const missing = await fetch(`${t.url}/v1/models/gpt-4oo`);
    expect(missing.status).toBe(404);
    expect((await readJson<ErrorBody>(missing)).error.message).toContain('Did you mean: gpt-4o');
    expect((await fetch(`${t.url}/v1/models?type=audio`)).status).toBe(400);
  });
});

describe('control plane', () => {
  it('reports status, peers, refresh and metrics', async () => {
    const status = await readJson<Record<string, unknown>>(await fetch(`${t.url}/_svc/status`));
    expect(status).toMatchObject({
      peerCount: 4,
      reachablePeerCount: 4,
      dhtNodeCount: 4,
      dataDir: t.dataDir,
      reachability: 'online',
      version: 'test',
    });
    expect(status.uptimeSeconds).toBeGreaterThanOrEqual(0);
    const peers = await readJson<{
      total: number;
      peers: Array<{
        peerId: string;
        reputationScore: number;
        offers: Array<{ prices: { inputUsdPerMillion: number } }>;
      }>;
    }>(await fetch(`${t.url}/_svc/peers`));
    expect(peers.total).toBe(4);
    const cheap = peers.peers.find((p) => p.peerId === CHEAP)!;
    expect(cheap.reputationScore).toBe(80);
    expect(cheap.offers[0]!.prices.inputUsdPerMillion).toBe(2.5);
    const refreshes = t.network.refreshCount;
    expect((await fetch(`${t.url}/_svc/peers/refresh`, { method: 'POST' })).status).toBe(200);
    expect(t.network.refreshCount).toBe(refreshes + 1);
    expect(await (await fetch(`${t.url}/_svc/channels`)).json()).toEqual({ channels: [] });
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toContain('svc_buyer_requests_total{route="chat_completions",status="200"}');
    expect(metrics).toContain('svc_buyer_tokens_total{kind="input"}');
    expect(metrics).toContain('svc_buyer_peers{state="reachable"} 4');
    expect(metrics).toContain('svc_buyer_request_duration_seconds_bucket');
    expect(metrics).toContain('svc_buyer_spend_micro_usd_total');
  });

  it('counts errors by code and failures per seller', async () => {
    await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [] }),
    });
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/svc_buyer_errors_total\{code="missing_routing_target"\} [1-9]/);
  });
});
