import { describe, expect, it } from 'vitest';
import { countTextTokens, SseDecoder } from '../../formats/index.js';
import type { ApiProtocol } from '../../network/index.js';
import { demoAnswer } from '../demo.js';

type Json = Record<string, unknown>;

const LONG = `Tell me everything about harbors. ${'And more about tides. '.repeat(40)}`;

async function whole(protocol: ApiProtocol, body: Json) {
  const answer = await demoAnswer(protocol, 'svc-demo-smart', body, 100);
  return { json: JSON.parse(answer.parts.join('')) as Json, usage: answer.usage };
}

async function events(protocol: ApiProtocol, body: Json): Promise<Json[]> {
  const answer = await demoAnswer(protocol, 'svc-demo-smart', { ...body, stream: true }, 100);
  return new SseDecoder()
    .push(answer.parts.join(''))
    .filter((event) => event.data !== '[DONE]')
    .map((event) => JSON.parse(event.data) as Json);
}

describe('the demo model stops at max_tokens as vendors do', () => {
  it('chat: finish_reason length, the text cut to the limit, usage within it (max_tokens and max_completion_tokens)', async () => {
    for (const field of ['max_tokens', 'max_completion_tokens']) {
      const body = { model: 'm', messages: [{ role: 'user', content: LONG }], [field]: 20 };
      const { json, usage } = await whole('openai-chat-completions', body);
      const choice = (json.choices as Json[])[0]!;
      expect(choice.finish_reason).toBe('length');
      const content = (choice.message as Json).content as string;
      expect(countTextTokens(content)).toBeLessThanOrEqual(20);
      expect(countTextTokens(content)).toBeGreaterThan(15);
      expect(usage.outputTokens).toBe(countTextTokens(content));
      expect((json.usage as Json).completion_tokens).toBe(usage.outputTokens);
    }
    const stream = await events('openai-chat-completions', {
      model: 'm',
      messages: [{ role: 'user', content: LONG }],
      max_tokens: 20,
    });
    const finishes = stream.flatMap((chunk) =>
      ((chunk.choices as Json[]) ?? []).map((c) => c.finish_reason).filter(Boolean),
    );
    expect(finishes).toEqual(['length']);
  });

  it('messages: stop_reason max_tokens in JSON and in the stream', async () => {
    const body = { model: 'm', max_tokens: 12, messages: [{ role: 'user', content: LONG }] };
    const { json, usage } = await whole('anthropic-messages', body);
    expect(json.stop_reason).toBe('max_tokens');
    expect(usage.outputTokens).toBeLessThanOrEqual(12);
    const stream = await events('anthropic-messages', body);
    const delta = stream.find((event) => event.type === 'message_delta')!;
    expect((delta.delta as Json).stop_reason).toBe('max_tokens');
    expect((delta.usage as Json).output_tokens).toBeLessThanOrEqual(12);
  });

  it('responses: status incomplete with reason max_output_tokens, and response.incomplete in the stream', async () => {
    const body = { model: 'm', max_output_tokens: 16, input: LONG };
    const { json, usage } = await whole('openai-responses', body);
    expect(json.status).toBe('incomplete');
    expect(json.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(usage.outputTokens).toBeLessThanOrEqual(16);
    const stream = await events('openai-responses', body);
    expect(stream.at(-1)!.type).toBe('response.incomplete');
    expect(stream.some((event) => event.type === 'response.completed')).toBe(false);
  });

  it('keeps a whole tool call only when it fits; an answer within the limit is unchanged', async () => {
    const tools = [
      {
        name: 'Read',
        description: 'Reads a file',
        input_schema: {
          type: 'object',
          properties: { file_path: { type: 'string' } },
          required: ['file_path'],
        },
      },
    ];
    const ask = (max: number) => ({
      model: 'm',
      max_tokens: max,
      tools,
      messages: [{ role: 'user', content: 'read notes.txt' }],
    });
    const roomy = await whole('anthropic-messages', ask(4096));
    expect(roomy.json.stop_reason).toBe('tool_use');
    const tight = await whole('anthropic-messages', ask(8));
    expect(tight.json.stop_reason).toBe('max_tokens');
    expect((tight.json.content as Json[]).some((block) => block.type === 'tool_use')).toBe(false);
    expect(tight.usage.outputTokens).toBeLessThanOrEqual(8);
  });
});
