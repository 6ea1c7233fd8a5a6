/**
 * The official SDKs' raw stream iteration over what we render, and the requests they send,
 * translated to every format.
 */
import { describe, expect, it } from 'vitest';
import { startFakeUpstream } from '../seller/testing/index.js';
import { RESPONSES, STREAMS } from './testing/samples.js';
import { collect, sdkClients, tools } from './testing/sdkClients.js';
import { parseRequest, translateRequest } from './translateRequest.js';
import { translateStream } from './translateStream.js';
import { API_FORMATS } from './types.js';

const sdk = sdkClients(() => startFakeUpstream());
const { replay } = sdk;

describe('raw SDK stream iteration', () => {
  it('chat.completions.create({stream:true}) yields our chunks, tool call deltas and usage', async () => {
    replay({
      kind: 'sse',
      events: await collect(translateStream(STREAMS.messages.tool, 'messages', 'chat')),
    });
    const stream = await sdk.openai.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let args = '';
    let finish: string | null = null;
    let promptTokens = 0;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      text += choice?.delta.content ?? '';
      args += choice?.delta.tool_calls?.[0]?.function?.arguments ?? '';
      finish = choice?.finish_reason ?? finish;
      promptTokens = chunk.usage?.prompt_tokens ?? promptTokens;
    }
    expect([text, JSON.parse(args), finish, promptTokens]).toEqual([
      'Let me check.',
      { city: 'Paris' },
      'tool_calls',
      125,
    ]);
  });

  it('responses.create({stream:true}) yields typed events ending in response.completed', async () => {
    replay({
      kind: 'sse',
      events: await collect(translateStream(STREAMS.chat.tool, 'chat', 'responses')),
    });
    const stream = await sdk.openai.responses.create({ model: 'm', input: 'Hi', stream: true });
    const types: string[] = [];
    let args = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.function_call_arguments.done') args = event.arguments;
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
  });

  it('messages.create({stream:true}) yields raw events in the documented order', async () => {
    replay({
      kind: 'sse',
      events: await collect(translateStream(STREAMS.responses.tool, 'responses', 'messages')),
    });
    const stream = await sdk.anthropic.messages.create({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });
});

describe('requests the SDKs send translate to every format', () => {
  const PNG =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

  async function sent(call: () => Promise<unknown>): Promise<unknown> {
    replay({ kind: 'json', status: 200, body: RESPONSES.chat.text });
    await call().catch(() => undefined);
    return sdk.server.requests.at(-1)?.body;
  }

  it.each(API_FORMATS)('a tool round trip with an image from the %s SDK', async (client) => {
    let body: unknown;
    if (client === 'chat') {
      body = await sent(() =>
        sdk.openai.chat.completions.create({
          model: 'm',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Weather here?' },
                { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
              ],
            },
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                },
              ],
            },
            { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
          ],
          tools: [
            {
              type: 'function',
              function: tools[0] as { name: string; parameters: Record<string, unknown> },
            },
          ],
        }),
      );
    } else if (client === 'responses') {
      body = await sent(() =>
        sdk.openai.responses.create({
          model: 'm',
          input: [
            {
              role: 'user',
              content: [
                { type: 'input_text', text: 'Weather here?' },
                { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
              ],
            },
            {
              type: 'function_call',
              call_id: 'call_1',
              name: 'get_weather',
              arguments: '{"city":"Paris"}',
            },
            { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
          ],
          tools: [
            {
              type: 'function',
              strict: false,
              ...(tools[0] as { name: string; parameters: Record<string, unknown> }),
            },
          ],
        }),
      );
    } else {
      body = await sent(() =>
        sdk.anthropic.messages.create({
          model: 'm',
          max_tokens: 100,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Weather here?' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
              ],
            },
            {
              role: 'assistant',
              content: [
                { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
              ],
            },
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' }],
            },
          ],
          tools: [
            {
              name: 'get_weather',
              input_schema: { type: 'object', properties: { city: { type: 'string' } } },
            },
          ],
        }),
      );
    }
    for (const seller of API_FORMATS) {
      const { body: out } = translateRequest(body, client, seller);
      const conv = parseRequest(out, seller);
      const parts = conv.turns.flatMap((t) => t.parts.map((p) => p.type));
      expect(parts).toEqual(['text', 'image', 'tool_call', 'tool_result']);
    }
  });
});
