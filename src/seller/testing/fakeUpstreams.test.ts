import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from './fakeUpstreams.js';

describe('fake upstreams speak the vendor wire formats (checked with the official SDKs)', () => {
  let fake: FakeUpstream;
  let openai: OpenAI;
  let anthropic: Anthropic;
  beforeAll(async () => {
    fake = await startFakeUpstream({ text: 'one two three', requireApiKey: 'sk-test' });
    openai = new OpenAI({ apiKey: 'sk-test', baseURL: fake.baseUrl, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
  });
  afterAll(() => fake.close());

  it('chat completions, plain and streamed with the usage chunk', async () => {
    const plain = await openai.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(plain.choices[0]!.message.content).toBe('one two three');
    expect(plain.usage).toMatchObject({
      prompt_tokens: 12,
      completion_tokens: 3,
      prompt_tokens_details: { cached_tokens: 4 },
    });
    const stream = await openai.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('one two three');
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3 });
  });

  it('responses, plain and streamed', async () => {
    const plain = await openai.responses.create({ model: 'gpt-x', input: 'hi' });
    expect(plain.output_text).toBe('one two three');
    expect(plain.usage).toMatchObject({
      input_tokens: 12,
      output_tokens: 3,
      input_tokens_details: { cached_tokens: 4 },
    });
    const stream = openai.responses.stream({ model: 'gpt-x', input: 'hi' });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('one two three');
  });

  it('anthropic messages, plain and streamed', async () => {
    const plain = await anthropic.messages.create({
      model: 'claude-x',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(plain.content[0]).toMatchObject({ type: 'text', text: 'one two three' });
    expect(plain.usage).toMatchObject({
      input_tokens: 8,
      cache_read_input_tokens: 4,
      output_tokens: 3,
    });
    const final = await anthropic.messages
      .stream({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'one two three' });
    expect(final.usage.output_tokens).toBe(3);
  });

  it('images and a missing key', async () => {
    const images = await openai.images.generate({ model: 'gpt-image-1', prompt: 'a cat', n: 2 });
    expect(images.data).toHaveLength(2);
    const wrong = new OpenAI({ apiKey: 'nope', baseURL: fake.baseUrl, maxRetries: 0 });
    await expect(wrong.chat.completions.create({ model: 'x', messages: [] })).rejects.toMatchObject(
      { status: 401 },
    );
  });
});
