/**
 * The official SDKs parse what we render: each seller sample (every format, text and tool call,
 * streaming and not) is translated to each client format and replayed to the `openai` and
 * `@anthropic-ai/sdk` clients from a loopback server.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcError } from '../errors/index.js';
import { type FakeUpstream, type Replay, startFakeUpstream } from '../seller/testing/index.js';
import { streamErrorEvents } from './errors.js';
import type { SseEvent } from './sse.js';
import { RESPONSES, type SampleCase, STREAMS, TOOL_CALL_ID } from './testing/samples.js';
import { parseRequest, translateRequest } from './translateRequest.js';
import { translateResponse } from './translateResponse.js';
import { translateStream } from './translateStream.js';
import { API_FORMATS, type ApiFormat } from './types.js';

let server: FakeUpstream;
/** The answer the vendor gives to the next requests. */
const replay = (answer: Replay) => server.configure({ replay: answer });
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  server = await startFakeUpstream();
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
});

async function collect(events: AsyncIterable<SseEvent>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** What a client sees, normalised across formats. */
interface Seen {
  text: string;
  toolName?: string;
  toolArgs?: unknown;
  toolId?: string;
  stop: string;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
}

const tools = [
  {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];

async function askChat(stream: boolean): Promise<Seen> {
  const params = {
    model: 'm',
    messages: [{ role: 'user' as const, content: 'Hi' }],
    tools: tools.map((t) => ({ type: 'function' as const, function: t })),
  };
  const completion = stream
    ? await openai.chat.completions
        .stream({ ...params, stream_options: { include_usage: true } })
        .finalChatCompletion()
    : await openai.chat.completions.create(params);
  const choice = completion.choices[0];
  const call = choice?.message.tool_calls?.[0];
  return {
    text: choice?.message.content ?? '',
    ...(call?.type === 'function'
      ? {
          toolName: call.function.name,
          toolArgs: JSON.parse(call.function.arguments),
          toolId: call.id,
        }
      : {}),
    stop: choice?.finish_reason ?? '',
    inputTokens: completion.usage?.prompt_tokens ?? -1,
    cachedTokens: completion.usage?.prompt_tokens_details?.cached_tokens ?? -1,
    outputTokens: completion.usage?.completion_tokens ?? -1,
  };
}

async function askResponses(stream: boolean): Promise<Seen> {
  const params = {
    model: 'm',
    input: 'Hi',
    tools: tools.map((t) => ({ type: 'function' as const, strict: false, ...t })),
  };
  const response = stream
    ? await openai.responses.stream(params).finalResponse()
    : await openai.responses.create(params);
  // The responses SDK resolves a failed stream; clients read status and error (as Codex does).
  if (response.status === 'failed') throw new Error(response.error?.message ?? 'failed');
  const call = response.output.find((o) => o.type === 'function_call');
  return {
    text: response.output_text,
    ...(call?.type === 'function_call'
      ? { toolName: call.name, toolArgs: JSON.parse(call.arguments), toolId: call.call_id }
      : {}),
    stop: `${response.status}${call ? '+tool' : ''}`,
    inputTokens: response.usage?.input_tokens ?? -1,
    cachedTokens: response.usage?.input_tokens_details.cached_tokens ?? -1,
    outputTokens: response.usage?.output_tokens ?? -1,
  };
}

async function askMessages(stream: boolean): Promise<Seen> {
  const params = {
    model: 'm',
    max_tokens: 100,
    messages: [{ role: 'user' as const, content: 'Hi' }],
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.parameters as { type: 'object'; properties: Record<string, unknown> },
    })),
  };
  const message = stream
    ? await anthropic.messages.stream(params).finalMessage()
    : await anthropic.messages.create(params);
  const text = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  const call = message.content.find((b) => b.type === 'tool_use');
  const u = message.usage;
  return {
    text,
    ...(call?.type === 'tool_use'
      ? { toolName: call.name, toolArgs: call.input, toolId: call.id }
      : {}),
    stop: message.stop_reason ?? '',
    inputTokens:
      u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
    cachedTokens: u.cache_read_input_tokens ?? -1,
    outputTokens: u.output_tokens,
  };
}

const ask: Record<ApiFormat, (stream: boolean) => Promise<Seen>> = {
  chat: askChat,
  responses: askResponses,
  messages: askMessages,
};

const expectedStop: Record<ApiFormat, Record<SampleCase, string>> = {
  chat: { text: 'stop', tool: 'tool_calls' },
  responses: { text: 'completed', tool: 'completed+tool' },
  messages: { text: 'end_turn', tool: 'tool_use' },
};

describe.each(API_FORMATS)('seller speaks %s', (seller) => {
  describe.each(API_FORMATS)('client speaks %s', (client) => {
    for (const sample of ['text', 'tool'] as const) {
      for (const stream of [false, true]) {
        it(`${sample} ${stream ? 'stream' : 'response'}`, async () => {
          if (stream) {
            const events = await collect(translateStream(STREAMS[seller][sample], seller, client));
            replay({ kind: 'sse', events });
          } else {
            replay({
              kind: 'json',
              status: 200,
              body: translateResponse(RESPONSES[seller][sample], seller, client),
            });
          }
          const seen = await ask[client](stream);
          expect(seen.text).toBe(sample === 'text' ? 'Hello there!' : 'Let me check.');
          expect(seen.stop).toBe(expectedStop[client][sample]);
          expect(seen.inputTokens).toBe(125);
          expect(seen.cachedTokens).toBe(100);
          expect(seen.outputTokens).toBe(15);
          if (sample === 'tool') {
            expect(seen.toolName).toBe('get_weather');
            expect(seen.toolArgs).toEqual({ city: 'Paris' });
            expect(seen.toolId).toBe(TOOL_CALL_ID[seller]);
          }
        });
      }
    }
  });
});

describe('errors reach the SDKs', () => {
  const overloaded = { status: 529, code: 'overloaded_error', message: 'Overloaded, retry later' };

  it.each(API_FORMATS)('an error after a %s stream started makes the SDK throw', async (client) => {
    async function* broken(): AsyncIterable<SseEvent> {
      yield STREAMS.messages.text[0] as SseEvent;
      yield STREAMS.messages.text[1] as SseEvent;
      yield STREAMS.messages.text[3] as SseEvent;
      yield {
        event: 'error',
        data: JSON.stringify({
          type: 'error',
          error: { type: 'overloaded_error', message: overloaded.message },
        }),
      };
    }
    const events = await collect(translateStream(broken(), 'messages', client));
    replay({ kind: 'sse', events });
    await expect(ask[client](true)).rejects.toThrow(/Overloaded/);
  });

  it.each(API_FORMATS)(
    'a transport failure mid-stream ends the %s stream with an error the SDK sees',
    async (client) => {
      async function* failing(): AsyncIterable<SseEvent> {
        for (const e of STREAMS.chat.text.slice(0, 2)) yield e;
        throw new SvcError('seller_timeout');
      }
      const events = await collect(translateStream(failing(), 'chat', client));
      replay({ kind: 'sse', events });
      await expect(ask[client](true)).rejects.toThrow(/did not answer in time/);
    },
  );

  it.each(API_FORMATS)(
    'a %s stream that ends early is an error, never a silent truncation',
    async (client) => {
      const events = await collect(
        translateStream(STREAMS.responses.text.slice(0, 5), 'responses', client),
      );
      replay({ kind: 'sse', events });
      await expect(ask[client](true)).rejects.toThrow(/ended before/);
    },
  );

  it('streamErrorEvents renders each format', () => {
    expect(streamErrorEvents('messages', overloaded)[0]?.event).toBe('error');
    expect(streamErrorEvents('chat', overloaded).at(-1)?.data).toBe('[DONE]');
    expect(streamErrorEvents('responses', overloaded)[0]?.event).toBe('error');
  });
});

describe('raw SDK stream iteration', () => {
  it('chat.completions.create({stream:true}) yields our chunks, tool call deltas and usage', async () => {
    replay({
      kind: 'sse',
      events: await collect(translateStream(STREAMS.messages.tool, 'messages', 'chat')),
    });
    const stream = await openai.chat.completions.create({
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
    const stream = await openai.responses.create({ model: 'm', input: 'Hi', stream: true });
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
    const stream = await anthropic.messages.create({
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
    return server.requests.at(-1)?.body;
  }

  it.each(API_FORMATS)('a tool round trip with an image from the %s SDK', async (client) => {
    let body: unknown;
    if (client === 'chat') {
      body = await sent(() =>
        openai.chat.completions.create({
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
        openai.responses.create({
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
        anthropic.messages.create({
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
