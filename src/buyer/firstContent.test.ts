/**
 * A stream starts with its first content (docs/decisions/217-a-stream-starts-with-its-first-content.md),
 * on real libp2p nodes with real sellers in front of fake upstreams: a seller that sends its head
 * and preamble and then resets or sends an error event is failed over unseen — the official SDK
 * gets one whole answer from the next seller — in every client format, translated or not; a
 * failure after the first content is still a mid-stream error; a pin and a client cancel do not
 * move on; past `buyer.headHoldSeconds` the stream is committed as it is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig, type SellerConfig } from '../config/index.js';
import { messageText } from '../formats/testing/sdkClients.js';
import type { SvcNode } from '../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
} from '../network/testing/loopback.js';
import { type SellerHandle, startSeller } from '../seller/index.js';
import { type FakeUpstream, startFakeUpstream } from '../seller/testing/index.js';
import { waitFor } from '../testing/index.js';
import type { RunningBuyerNode } from './runBuyerNode.js';
import { startUnpaidBuyer } from './testing/discovery.js';

const SECOND_TEXT = 'The second seller answers in full.';

/** One seller of `chat-fc` (chat), `claude-fc` (messages) and `resp-fc` (responses). */
function sellerOf(upstream: FakeUpstream, price: number): SellerConfig {
  const pricing = { inputUsdPerMillion: price, outputUsdPerMillion: price * 4 };
  const provider = (
    type: 'openai-chat' | 'anthropic-messages' | 'openai-responses',
    id: string,
  ): SellerConfig['providers'][number] => ({
    type,
    name: type,
    baseUrl: upstream.baseUrl,
    services: { [id]: { upstreamModel: `${id}-upstream`, categories: [] } },
    defaultPricing: pricing,
    maxConcurrency: 8,
  });
  return {
    displayName: `seller at ${price}`,
    uploadLimitBytes: 1024 * 1024,
    providers: [
      provider('openai-chat', 'chat-fc'),
      provider('anthropic-messages', 'claude-fc'),
      provider('openai-responses', 'resp-fc'),
    ],
  };
}

let bootstrap: SvcNode;
let failing: FakeUpstream;
let good: FakeUpstream;
let first: SellerHandle;
let second: SellerHandle;
let buyer: RunningBuyerNode;
let quickBuyer: RunningBuyerNode;
const dirs: string[] = [];
let openai: OpenAI;
let anthropic: Anthropic;
let firstId: string;
let secondId: string;
/** Prompts differ per request: a conversation's later turns prefer the seller of earlier ones. */
let turn = 0;
const prompt = (what: string) => `${what} (${++turn})`;

beforeAll(async () => {
  bootstrap = await startLoopbackNode('bootstrap');
  const network = loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] });
  failing = await startFakeUpstream({ text: 'never seen' });
  good = await startFakeUpstream({ text: SECOND_TEXT });
  // The cheaper seller ranks first.
  first = await startSeller({ identity: randomIdentity(), seller: sellerOf(failing, 1), network });
  second = await startSeller({ identity: randomIdentity(), seller: sellerOf(good, 2), network });
  firstId = first.node.peerId;
  secondId = second.node.peerId;
  for (const prefix of ['svc-first-content-', 'svc-first-content-quick-'])
    dirs.push(mkdtempSync(join(tmpdir(), prefix)));
  buyer = await startUnpaidBuyer(network, dirs[0]!, 2);
  // A hold of 0.3 s: the bound passes while the seller sends nothing but pings.
  quickBuyer = await startUnpaidBuyer(network, dirs[1]!, 2, {
    ...defaultConfig().buyer,
    headHoldSeconds: 0.3,
  });
  openai = new OpenAI({ apiKey: 'x', baseURL: `${buyer.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: 'x', baseURL: buyer.url, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await quickBuyer?.stop();
  await buyer?.stop();
  await first?.stop();
  await second?.stop();
  await bootstrap?.stop();
  await failing?.close();
  await good?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  // Three failures in a row cool a seller down (it would rank last): one answer it serves,
  // pinned, clears them, so the first seller is asked first in every test.
  failing.configure({ fault: 'none' });
  await openai.chat.completions.create({
    model: `${firstId}@chat-fc`,
    messages: [{ role: 'user', content: prompt('warm up') }],
  });
});

/** A streamed chat completion through the buyer: the text received and the response's head. */
async function streamedChat(model: string, tag: string) {
  const { data: stream, response } = await openai.chat.completions
    .create({ model, messages: [{ role: 'user', content: prompt(tag) }], stream: true })
    .withResponse();
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  return { text, response };
}

/** The request the failing upstream saw last, once it is over. */
async function lastFailingCall() {
  const call = failing.requests.at(-1)!;
  await call.done;
  return call;
}

describe('a seller that fails before its first content is failed over unseen', () => {
  it('chat client, chat sellers, a reset after the role-only chunk', async () => {
    failing.configure({ fault: 'reset-before-content' });
    const { text, response } = await streamedChat('chat-fc', 'reset');
    expect(text).toBe(SECOND_TEXT);
    expect(response.headers.get('x-svc-peer-id')).toBe(secondId);
    expect(response.headers.get('x-svc-attempts')).toMatch(
      new RegExp(`^${firstId}@chat-fc:(reset|cut)$`),
    );
    const record = buyer.service.records.get(response.headers.get('x-svc-request-id')!);
    expect(record).toMatchObject({ completed: true, peerId: secondId, status: 200 });
    expect(record?.attempts).toHaveLength(1);
    expect(buyer.service.health.totalFailures(firstId)).toBeGreaterThan(0);
    expect((await lastFailingCall()).body).toMatchObject({ model: 'chat-fc-upstream' });
  });

  it("messages client, messages sellers, Anthropic's overloaded_error after message_start and a ping", async () => {
    failing.configure({ fault: 'error-before-content' });
    const failuresBefore = buyer.service.health.totalFailures(firstId);
    const { data: stream, response } = await anthropic.messages
      .create({
        model: 'claude-fc',
        max_tokens: 50,
        messages: [{ role: 'user', content: prompt('overloaded') }],
        stream: true,
      })
      .withResponse();
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
        text += event.delta.text;
    }
    expect(text).toBe(SECOND_TEXT);
    // One stream: one message_start, one message_stop, no error.
    expect(types.filter((type) => type === 'message_start')).toHaveLength(1);
    expect(types.at(-1)).toBe('message_stop');
    expect(response.headers.get('x-svc-peer-id')).toBe(secondId);
    expect(response.headers.get('x-svc-attempts')).toBe(`${firstId}@claude-fc:error_event`);
    expect(buyer.service.health.totalFailures(firstId)).toBe(failuresBefore + 1);
  });

  it('responses client, responses sellers, an error event after response.created', async () => {
    failing.configure({ fault: 'error-before-content' });
    const { data: stream, response } = await openai.responses
      .create({ model: 'resp-fc', input: prompt('responses'), stream: true })
      .withResponse();
    let text = '';
    let completed = 0;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed++;
    }
    expect(text).toBe(SECOND_TEXT);
    expect(completed).toBe(1);
    expect(response.headers.get('x-svc-peer-id')).toBe(secondId);
    expect(response.headers.get('x-svc-attempts')).toBe(`${firstId}@resp-fc:error_event`);
  });

  it('translated: a messages client served by chat sellers, the first failing with an error event', async () => {
    failing.configure({ fault: 'error-before-content' });
    const { data: stream, response } = await anthropic.messages
      .create({
        model: 'chat-fc',
        max_tokens: 50,
        messages: [{ role: 'user', content: prompt('translated to chat') }],
        stream: true,
      })
      .withResponse();
    const text = await messageText(stream);
    expect(text).toBe(SECOND_TEXT);
    expect(response.headers.get('x-svc-peer-id')).toBe(secondId);
    expect(response.headers.get('x-svc-attempts')).toBe(`${firstId}@chat-fc:error_event`);
  });

  it('translated: a chat client served by messages sellers, the first resetting after its ping', async () => {
    failing.configure({ fault: 'reset-before-content' });
    const { text, response } = await streamedChat('claude-fc', 'translated to messages');
    expect(text).toBe(SECOND_TEXT);
    expect(response.headers.get('x-svc-peer-id')).toBe(secondId);
    expect(response.headers.get('x-svc-attempts')).toMatch(
      new RegExp(`^${firstId}@claude-fc:(reset|cut)$`),
    );
  });
});

describe('what does not move on', () => {
  it('a failure after the first content is still a mid-stream error from the first seller', async () => {
    failing.configure({ fault: 'broken-sse', text: 'one two three four five' });
    const goodBefore = good.requests.length;
    const { data: stream, response } = await openai.chat.completions
      .create({
        model: 'chat-fc',
        messages: [{ role: 'user', content: prompt('cut after content') }],
        stream: true,
      })
      .withResponse();
    let text = '';
    const consume = async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    };
    // The seller cut its upstream's fourth event in half: the SDK raises on what it received.
    await expect(consume()).rejects.toThrow();
    expect(text).toBe('one two ');
    expect(response.headers.get('x-svc-peer-id')).toBe(firstId);
    const id = response.headers.get('x-svc-request-id')!;
    await waitFor(() => buyer.service.records.get(id), 5_000, 'request recorded');
    expect(buyer.service.records.get(id)).toMatchObject({ completed: false, peerId: firstId });
    expect(buyer.service.records.get(id)?.attempts).toEqual([]);
    expect(good.requests.length).toBe(goodBefore);
    failing.configure({ text: 'never seen' });
  });

  it('a pinned request is not failed over: the error event becomes its error status', async () => {
    failing.configure({ fault: 'error-before-content' });
    const goodBefore = good.requests.length;
    const error = await anthropic.messages
      .create({
        model: `${firstId}@claude-fc`,
        max_tokens: 50,
        messages: [{ role: 'user', content: prompt('pinned') }],
        stream: true,
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const apiError = error as InstanceType<typeof Anthropic.APIError>;
    expect(apiError.status).toBe(529);
    expect(apiError.error).toMatchObject({ error: { type: 'overloaded_error' } });
    expect(apiError.headers?.get('x-svc-attempts')).toBe(`${firstId}@claude-fc:error_event`);
    expect(good.requests.length).toBe(goodBefore);
  });

  it('a client that cancels while the head is held cancels the seller, and nothing is retried', async () => {
    const { promise: release, resolve } = Promise.withResolvers<void>();
    failing.configure({ fault: 'reset-before-content', keepAliveUntil: release });
    const goodBefore = good.requests.length;
    const failingBefore = failing.requests.length;
    const controller = new AbortController();
    const request = fetch(`${buyer.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-fc',
        max_tokens: 50,
        stream: true,
        messages: [{ role: 'user', content: prompt('cancel while held') }],
      }),
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await waitFor(() => failing.requests.length > failingBefore, 10_000, 'upstream asked');
    controller.abort();
    expect(await request).toBeInstanceOf(Error);
    const call = await lastFailingCall();
    expect(call.closedEarly).toBe(true);
    resolve();
    failing.configure({ keepAliveUntil: undefined });
    expect(good.requests.length).toBe(goodBefore);
  });

  it('a seller sending only pings past buyer.headHoldSeconds gets its stream committed as today', async () => {
    const { promise: release, resolve } = Promise.withResolvers<void>();
    failing.configure({ fault: 'reset-before-content', keepAliveUntil: release });
    const goodBefore = good.requests.length;
    // The head arrives while the seller still sends nothing but pings: the bound passed.
    const response = await fetch(`${quickBuyer.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-fc',
        max_tokens: 50,
        stream: true,
        messages: [{ role: 'user', content: prompt('pings only') }],
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(firstId);
    resolve();
    const text = await response.text();
    expect(text).toContain('event: message_start');
    expect(text).toContain('event: ping');
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
    expect(text).toMatch(/: svc-usage \{[^\n]*"costUsd":"0\.000000","errorCode":"seller_error"\}/);
    expect(good.requests.length).toBe(goodBefore);
    failing.configure({ keepAliveUntil: undefined });
  });
});
