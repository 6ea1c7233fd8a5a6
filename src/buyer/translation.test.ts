import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicMessage, chatCompletion, chatStream } from './testing/sellerReplies.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer;
let chatSeller: string;
let claudeSeller: string;

beforeAll(async () => {
  t = await startTestBuyer({ payments: 'unpaid-dev' });
  chatSeller = t.network.addSeller(
    {
      peerId: 'chatonly',
      services: [{ id: 'llama-3.1-8b-instruct', protocols: ['openai-chat-completions'] }],
    },
    (call) =>
      call.json.stream
        ? chatStream(call, ['Hi', ' there'])
        : chatCompletion(call, 'translated hello'),
  );
  claudeSeller = t.network.addSeller(
    {
      peerId: 'claudeonly',
      services: [{ id: 'claude-sonnet-4', protocols: ['anthropic-messages'] }],
    },
    (call) => anthropicMessage(call, 'from messages'),
  );
});
afterAll(() => t.stop());

describe('format translation', () => {
  it('serves an Anthropic client from a chat-completions seller', async () => {
    const anthropic = new Anthropic({ apiKey: 'x', baseURL: t.url, maxRetries: 0 });
    const { data, response } = await anthropic.messages
      .create({
        model: 'llama-3.1-8b-instruct',
        max_tokens: 50,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'hello' }],
      })
      .withResponse();
    expect(data.type).toBe('message');
    expect(data.content[0]).toMatchObject({ type: 'text', text: 'translated hello' });
    expect(response.headers.get('x-svc-peer-id')).toBe(chatSeller);
    expect(response.headers.get('x-svc-input-tokens')).toBe('12');
    const call = t.network.callsTo(chatSeller).at(-1)!;
    expect(call.request.path).toBe('/v1/chat/completions');
    expect(call.json.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello' },
    ]);
  });

  it('streams an Anthropic client from a chat-completions seller, usage from the seller', async () => {
    const anthropic = new Anthropic({ apiKey: 'x', baseURL: t.url, maxRetries: 0 });
    const stream = anthropic.messages.stream({
      model: 'llama-3.1-8b-instruct',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hello' }],
    });
    const message = await stream.finalMessage();
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Hi there' });
    // The chat seller was asked to report usage in its stream.
    expect(t.network.callsTo(chatSeller).at(-1)!.json.stream_options).toEqual({
      include_usage: true,
    });
  });

  it('serves a chat client from a messages seller', async () => {
    const openai = new OpenAI({ apiKey: 'x', baseURL: `${t.url}/v1`, maxRetries: 0 });
    const completion = await openai.chat.completions.create({
      model: 'claude-sonnet-4',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion.choices[0]!.message.content).toBe('from messages');
    expect(completion.usage?.prompt_tokens).toBe(24);
    expect(t.network.callsTo(claudeSeller).at(-1)!.request.path).toBe('/v1/messages');
  });

  it('serves the responses API to the OpenAI SDK from a chat-completions seller', async () => {
    const openai = new OpenAI({ apiKey: 'x', baseURL: `${t.url}/v1`, maxRetries: 0 });
    const { data, response } = await openai.responses
      .create({ model: 'llama-3.1-8b-instruct', input: 'hello', instructions: 'Be brief.' })
      .withResponse();
    expect(data.output_text).toBe('translated hello');
    expect(response.headers.get('x-svc-peer-id')).toBe(chatSeller);
    expect(response.headers.get('x-svc-token-source')).toBe('usage');
    expect(t.network.callsTo(chatSeller).at(-1)!.request.path).toBe('/v1/chat/completions');
  });

  it('rejects an invalid request with 400 naming the field, before any seller', async () => {
    const before = t.network.calls.length;
    const response = await fetch(`${t.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llama-3.1-8b-instruct', messages: 'nope', max_tokens: 5 }),
    });
    expect(response.status).toBe(400);
    expect(t.network.calls.length).toBe(before);
  });
});
