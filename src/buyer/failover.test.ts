import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TransportError } from '../network/index.js';
import { hang, type MemoryNetwork, sseReply } from './testing/memoryNetwork.js';
import { type ErrorBody, readJson } from './testing/readJson.js';
import {
  anthropicMessage,
  chatChunk,
  chatCompletion,
  chatStream,
  openAiError,
} from './testing/sellerReplies.js';
import { scoreAll, startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer;
let network: MemoryNetwork;
let openai: OpenAI;
let first: string;
let second: string;
let third: string;

const price = (input: number) => ({ inputUsdPerMillion: input, outputUsdPerMillion: input });
const chat = (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });

beforeEach(async () => {
  t = await startTestBuyer({
    config: { sellerHeadTimeoutSeconds: 0.3 },
    reputation: scoreAll(80),
    payments: 'unpaid-dev',
  });
  network = t.network;
  first = network.addSeller(
    { peerId: 'first', services: [{ id: 'gpt-4o', pricing: price(0) }] },
    (c) => chatCompletion(c, 'first'),
  );
  second = network.addSeller(
    { peerId: 'second', services: [{ id: 'gpt-4o', pricing: price(0.001) }] },
    (c) => chatCompletion(c, 'second'),
  );
  third = network.addSeller(
    { peerId: 'third', services: [{ id: 'gpt-4o', pricing: price(0.002) }] },
    (c) => chatCompletion(c, 'third'),
  );
  openai = new OpenAI({ apiKey: 'x', baseURL: `${t.url}/v1`, maxRetries: 0 });
});
afterEach(() => t.stop());

describe('failover', () => {
  it('moves to the next seller after a 5xx and lists the attempts', async () => {
    network.setScript(first, () => openAiError(503, 'upstream overloaded'));
    const { data, response } = await openai.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('second');
    expect(response.headers.get('x-svc-peer-id')).toBe(second);
    expect(response.headers.get('x-svc-attempts')).toBe(`${first}@gpt-4o:503`);
  });

  it('retries a 429 on the same seller first, honouring Retry-After', async () => {
    let calls = 0;
    network.setScript(first, (c) =>
      ++calls < 3
        ? openAiError(429, 'slow down', { 'retry-after': '0' })
        : chatCompletion(c, 'first'),
    );
    const response = await chat();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(first);
    expect(network.callsTo(first)).toHaveLength(3);
    expect(network.callsTo(second)).toHaveLength(0);
  });

  it('gives up on a seller after three 429s, or at once when Retry-After is too long', async () => {
    network.setScript(first, () => openAiError(429, 'slow down', { 'retry-after': '0' }));
    network.setScript(second, () => openAiError(429, 'later', { 'retry-after': '3600' }));
    const response = await chat();
    expect(response.headers.get('x-svc-peer-id')).toBe(third);
    expect(network.callsTo(first)).toHaveLength(3);
    expect(network.callsTo(second)).toHaveLength(1);
  });

  it('fails over when a seller hangs before sending headers, cancelling it', async () => {
    network.setScript(first, hang);
    const response = await chat();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(second);
    expect(response.headers.get('x-svc-attempts')).toBe(`${first}@gpt-4o:timeout`);
    expect(network.callsTo(first)[0]!.signal.aborted).toBe(true);
  });

  it('fails over on a reset or an unreachable seller', async () => {
    network.setScript(first, () => {
      throw new Error('stream reset by peer');
    });
    network.setScript(second, () => {
      throw new TransportError('unreachable', second, 'dial failed', { beforeHead: true });
    });
    const response = await chat();
    expect(response.headers.get('x-svc-peer-id')).toBe(third);
    expect(response.headers.get('x-svc-attempts')).toBe(
      `${first}@gpt-4o:reset, ${second}@gpt-4o:unreachable`,
    );
  });

  it('tries a spare in place of each seller that cannot be reached, never past the limit for others', async () => {
    const fourth = network.addSeller(
      { peerId: 'fourth', services: [{ id: 'gpt-4o', pricing: price(0.003) }] },
      (c) => chatCompletion(c, 'fourth'),
    );
    const unreachable = (peer: string) => () => {
      throw new TransportError('unreachable', peer, 'dial failed', { beforeHead: true });
    };
    // The three best just died: the request never left the buyer, so the fourth answers.
    for (const peer of [first, second, third]) network.setScript(peer, unreachable(peer));
    const served = await chat();
    expect(served.status).toBe(200);
    expect(served.headers.get('x-svc-peer-id')).toBe(fourth);
    expect(served.headers.get('x-svc-attempts')).toBe(
      `${first}@gpt-4o:unreachable, ${second}@gpt-4o:unreachable, ${third}@gpt-4o:unreachable`,
    );
  });

  it('keeps to the limit when sellers answered with errors: the spare is not asked', async () => {
    const fourth = network.addSeller(
      { peerId: 'fourth', services: [{ id: 'gpt-4o', pricing: price(0.003) }] },
      (c) => chatCompletion(c, 'fourth'),
    );
    for (const peer of [first, second, third])
      network.setScript(peer, () => openAiError(502, `bad gateway at ${peer}`));
    const failed = await chat();
    expect(failed.status).toBe(502);
    expect(network.callsTo(fourth)).toHaveLength(0);
  });

  it('does not fail over on a non-retryable error', async () => {
    network.setScript(first, () => openAiError(400, 'bad parameter temperature'));
    const response = await chat();
    expect(response.status).toBe(400);
    const body = await readJson<ErrorBody>(response);
    expect(body.error.message).toContain('bad parameter temperature');
    expect(network.callsTo(second)).toHaveLength(0);
  });

  it('never fails over a pinned request', async () => {
    network.setScript(second, () => openAiError(500, 'boom'));
    const response = await chat({ model: `0x${second}@gpt-4o` });
    expect(response.status).toBe(500);
    expect(network.callsTo(first)).toHaveLength(0);
    expect(network.callsTo(third)).toHaveLength(0);
  });

  it('gives the client the last seller error in its own style, with every attempt', async () => {
    for (const peer of [first, second, third])
      network.setScript(peer, () => openAiError(502, `bad gateway at ${peer}`));
    const response = await chat();
    expect(response.status).toBe(502);
    const body = await readJson<ErrorBody>(response);
    expect(body.error.message).toContain(`bad gateway at ${third}`);
    expect(response.headers.get('x-svc-attempts')).toBe(
      `${first}@gpt-4o:502, ${second}@gpt-4o:502, ${third}@gpt-4o:502`,
    );

    const claude = network.addSeller(
      {
        peerId: 'claude',
        services: [{ id: 'claude-sonnet-4', protocols: ['anthropic-messages'], pricing: price(0) }],
      },
      () => ({ status: 503, body: 'overloaded' }),
    );
    const anthropic = new Anthropic({ apiKey: 'x', baseURL: t.url, maxRetries: 0 });
    const error = await anthropic.messages
      .create({
        model: 'claude-sonnet-4',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const apiError = error as InstanceType<typeof Anthropic.APIError>;
    expect(apiError.status).toBe(503);
    expect(apiError.error).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error', code: 'upstream_error' },
    });
    expect(apiError.headers?.get('x-svc-attempts')).toBe(`${claude}@claude-sonnet-4:503`);
    void anthropicMessage;
  });

  it('does not fail over once streaming has started: its first content was delivered', async () => {
    network.setScript(first, (c) => {
      const reply = chatStream(c, ['a', 'b']);
      const events = reply.body as AsyncIterable<string>;
      async function* broken() {
        let sent = 0;
        for await (const event of events) {
          yield event;
          // The role-only chunk, then the first content, then the seller dies.
          if (++sent === 2) throw new Error('connection lost');
        }
      }
      return { ...reply, body: broken() };
    });
    const response = await chat({ stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(first);
    const text = await response.text();
    expect(text).toContain('"content":"a"');
    expect(text).toContain(`data: {"error":{"message":"Seller ${first} failed mid-stream`);
    expect(text).toContain(': svc-usage');
    expect(network.callsTo(second)).toHaveLength(0);
  });

  it('fails over a stream that failed before its first content, unseen by the client', async () => {
    network.setScript(first, (c) => {
      const reply = chatStream(c, ['a', 'b']);
      const events = reply.body as AsyncIterable<string>;
      async function* broken() {
        for await (const event of events) {
          // Only the role-only chunk, then the seller dies.
          yield event;
          throw new Error('connection lost');
        }
      }
      return { ...reply, body: broken() };
    });
    network.setScript(second, (c) => chatStream(c, ['from ', 'second']));
    const chunks: string[] = [];
    const { data: stream, response } = await openai.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .withResponse();
    for await (const chunk of stream) chunks.push(chunk.choices[0]?.delta.content ?? '');
    expect(chunks.join('')).toBe('from second');
    expect(response.headers.get('x-svc-peer-id')).toBe(second);
    expect(response.headers.get('x-svc-attempts')).toBe(`${first}@gpt-4o:reset`);
    expect(t.buyer.service.health.totalFailures(first)).toBe(1);
  });
});

describe('a stream that fails before its first content', () => {
  const role = chatChunk({ role: 'assistant', content: '' });
  const endings: Record<string, { events: string[]; label: string }> = {
    'a malformed event': { events: [role, 'data: {"choices": [\n\n'], label: 'malformed' },
    'an end without content or final event': { events: [role], label: 'cut' },
    'an error event of a server error': {
      events: [role, 'data: {"error":{"message":"upstream exploded","type":"server_error"}}\n\n'],
      label: 'error_event',
    },
  };

  it.each(Object.keys(endings))('fails over %s, unseen by the client', async (ending) => {
    const { events, label } = endings[ending]!;
    network.setScript(first, (c) => sseReply(events, { signal: c.signal }));
    network.setScript(second, (c) => chatStream(c, ['whole']));
    const response = await chat({ stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(second);
    expect(response.headers.get('x-svc-attempts')).toBe(`${first}@gpt-4o:${label}`);
    const text = await response.text();
    expect(text).toContain('"content":"whole"');
    expect(text).not.toContain('error');
  });

  it('does not fail over an error event the request is at fault for (400)', async () => {
    const claude = network.addSeller(
      {
        peerId: 'claude',
        services: [{ id: 'claude-x', protocols: ['anthropic-messages'], pricing: price(0) }],
      },
      (c) =>
        sseReply(
          [
            'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
            'event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}\n\n',
          ],
          { signal: c.signal },
        ),
    );
    const other = network.addSeller(
      {
        peerId: 'other',
        services: [{ id: 'claude-x', protocols: ['anthropic-messages'], pricing: price(0.5) }],
      },
      (c) => chatCompletion(c, 'never'),
    );
    const anthropic = new Anthropic({ apiKey: 'x', baseURL: t.url, maxRetries: 0 });
    const error = await anthropic.messages
      .create({
        model: 'claude-x',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'too long' }],
        stream: true,
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
    expect((error as InstanceType<typeof Anthropic.APIError>).message).toContain(
      'prompt is too long',
    );
    expect(network.callsTo(claude)).toHaveLength(1);
    expect(network.callsTo(other)).toHaveLength(0);
  });

  it('commits a preamble past its byte bound as it is: a failure after it is mid-stream', async () => {
    const padding = `: ${'x'.repeat(1024)}\n\n`;
    network.setScript(first, () => {
      async function* body() {
        yield chatChunk({ role: 'assistant', content: '' });
        for (let i = 0; i < 300; i++) yield padding;
        throw new Error('connection lost');
      }
      return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: body() };
    });
    const response = await chat({ stream: true });
    expect(response.headers.get('x-svc-peer-id')).toBe(first);
    const text = await response.text();
    expect(text).toContain(`data: {"error":{"message":"Seller ${first} failed mid-stream`);
    expect(network.callsTo(second)).toHaveLength(0);
  });
});

describe('client cancel', () => {
  it('cancels the seller when the client disconnects before the head, without failover', async () => {
    network.setScript(first, hang);
    const controller = new AbortController();
    const request = fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'cancel me' }] }),
      signal: controller.signal,
    }).catch(() => undefined);
    await waitFor(() =>
      network.calls.some((c) => c.json.messages && JSON.stringify(c.json).includes('cancel me')),
    );
    controller.abort();
    await request;
    const call = network.calls.find((c) => JSON.stringify(c.json).includes('cancel me'))!;
    await waitFor(() => call.signal.aborted);
    expect(network.cancelled).toContain(call);
    expect(network.calls.filter((c) => JSON.stringify(c.json).includes('cancel me'))).toHaveLength(
      1,
    );
  });

  it('cancels the seller stream when the client goes away mid-stream', async () => {
    network.setScript(first, (c) =>
      sseReply(
        Array.from({ length: 200 }, (_, i) => chatChunk({ content: `${i} ` })),
        { delayMs: 20, signal: c.signal },
      ),
    );
    const controller = new AbortController();
    const streaming = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o',
        stream: true,
        messages: [{ role: 'user', content: 'long' }],
      }),
      signal: controller.signal,
    });
    const reader = streaming.body!.getReader();
    await reader.read();
    controller.abort();
    const call = network.calls.find((c) => JSON.stringify(c.json).includes('long'))!;
    await waitFor(() => call.signal.aborted);
    expect(network.calls.filter((c) => JSON.stringify(c.json).includes('long'))).toHaveLength(1);
    const id = streaming.headers.get('x-svc-request-id')!;
    await waitFor(() => t.buyer.service.records.get(id) !== undefined);
    expect(t.buyer.service.records.get(id)).toMatchObject({
      completed: false,
      errorCode: 'request_cancelled',
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
