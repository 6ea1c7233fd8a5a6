import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AnswerSpec, answerJson, answerSse } from './answer.js';
import { UsageMeter } from './usage.js';

const usage = { inputTokens: 120, cachedInputTokens: 20, outputTokens: 7 };
const spec: AnswerSpec = { model: 'm', text: 'one two three four', usage };
const chatCompletionSse = (s: AnswerSpec, options: { includeUsage: boolean }) =>
  answerSse('chat', s, options);
const responseSse = (s: AnswerSpec) => answerSse('responses', s);
const messageSse = (s: AnswerSpec) => answerSse('messages', s);
const chatCompletionJson = (s: AnswerSpec) => answerJson('chat', s);
const responseJson = (s: AnswerSpec) => answerJson('responses', s);
const messageJson = (s: AnswerSpec) => answerJson('messages', s);
const encoder = new TextEncoder();

function splitInto(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let last = 0;
  for (const point of [...points, bytes.length]) {
    out.push(bytes.subarray(last, point));
    last = point;
  }
  return out;
}

describe('usage meter', () => {
  const streams = [
    ['openai-chat-completions', chatCompletionSse(spec, { includeUsage: true })],
    ['openai-responses', responseSse(spec)],
    ['anthropic-messages', messageSse(spec)],
  ] as const;

  it.each(streams)('counts %s stream usage however the bytes are split', (protocol, events) => {
    const bytes = encoder.encode(events.join(''));
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
        const meter = new UsageMeter(protocol, true);
        for (const chunk of splitInto(bytes, cuts)) meter.push(chunk);
        expect(meter.finish()).toEqual({ usage, complete: true, content: true });
      }),
      { numRuns: 60 },
    );
  });

  it.each([
    ['openai-chat-completions', chatCompletionJson(spec)],
    ['openai-responses', responseJson(spec)],
    ['anthropic-messages', messageJson(spec)],
  ] as const)('counts %s JSON usage', (protocol, json) => {
    const meter = new UsageMeter(protocol, false);
    meter.push(encoder.encode(JSON.stringify(json)));
    expect(meter.finish()).toEqual({ usage, complete: true });
  });

  it.each([
    ['openai-chat-completions', true],
    ['openai-chat-completions', false],
    ['openai-responses', true],
    ['openai-responses', false],
  ] as const)('claims %s hidden reasoning tokens (stream: %s)', (protocol, stream) => {
    const reasoning = { ...usage, outputTokens: 907, reasoningTokens: 900 };
    const withReasoning = { ...spec, usage: reasoning };
    const body =
      protocol === 'openai-chat-completions'
        ? stream
          ? chatCompletionSse(withReasoning, { includeUsage: true }).join('')
          : JSON.stringify(chatCompletionJson(withReasoning))
        : stream
          ? responseSse(withReasoning).join('')
          : JSON.stringify(responseJson(withReasoning));
    const meter = new UsageMeter(protocol, stream);
    meter.push(encoder.encode(body));
    expect(meter.finish()).toEqual({
      usage: reasoning,
      complete: true,
      ...(stream ? { content: true } : {}),
    });
  });

  it('tells a stream cut in its preamble (nothing delivered) from one cut after its first content', () => {
    const events = messageSse(spec);
    // message_start (reporting usage) and content_block_start: no content yet.
    const preamble = new UsageMeter('anthropic-messages', true);
    for (const event of events.slice(0, 2)) preamble.push(encoder.encode(event));
    expect(preamble.finish()).toMatchObject({ complete: false, content: false });
    const started = new UsageMeter('anthropic-messages', true);
    for (const event of events.slice(0, 3)) started.push(encoder.encode(event));
    expect(started.finish()).toMatchObject({ complete: false, content: true });
    // Content after the stream's first failure was never the answer.
    const afterError = new UsageMeter('anthropic-messages', true);
    afterError.push(encoder.encode(events[0]!));
    afterError.push(
      encoder.encode(
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error"}}\n\n',
      ),
    );
    for (const event of events.slice(1)) afterError.push(encoder.encode(event));
    expect(afterError.finish()).toMatchObject({ complete: false, content: false });
  });

  it('reports a cut stream and malformed JSON instead of claiming completion', () => {
    const events = messageSse(spec);
    const cut = new UsageMeter('anthropic-messages', true);
    for (const event of events.slice(0, 3)) cut.push(encoder.encode(event));
    expect(cut.finish()).toMatchObject({
      complete: false,
      error: expect.stringContaining('before its final event'),
    });
    const chatWithoutUsage = new UsageMeter('openai-chat-completions', true);
    for (const event of chatCompletionSse(spec, { includeUsage: false }))
      chatWithoutUsage.push(encoder.encode(event));
    expect(chatWithoutUsage.finish()).toEqual({ complete: true, content: true });
    const garbage = new UsageMeter('openai-chat-completions', false);
    garbage.push(encoder.encode('{"choices": ['));
    expect(garbage.finish()).toEqual({
      complete: false,
      error: 'upstream returned malformed JSON',
    });
  });
});
