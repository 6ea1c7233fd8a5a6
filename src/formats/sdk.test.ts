/**
 * The official SDKs parse what we render: each seller sample (every format, text and tool call,
 * streaming and not) is translated to each client format and replayed to the `openai` and
 * `@anthropic-ai/sdk` clients from a loopback server; errors reach them as errors.
 */
import { describe, expect, it } from 'vitest';
import { SvcError } from '../errors/index.js';
import { startFakeUpstream } from '../seller/testing/index.js';
import { streamErrorEvents } from './errors.js';
import type { SseEvent } from './sse.js';
import { RESPONSES, type SampleCase, STREAMS, TOOL_CALL_ID } from './testing/samples.js';
import { collect, sdkClients, tools } from './testing/sdkClients.js';
import { translateResponse } from './translateResponse.js';
import { translateStream } from './translateStream.js';
import { API_FORMATS, type ApiFormat } from './types.js';

const sdk = sdkClients(() => startFakeUpstream());
const { replay } = sdk;

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

async function askChat(stream: boolean): Promise<Seen> {
  const params = {
    model: 'm',
    messages: [{ role: 'user' as const, content: 'Hi' }],
    tools: tools.map((t) => ({ type: 'function' as const, function: t })),
  };
  const completion = stream
    ? await sdk.openai.chat.completions
        .stream({ ...params, stream_options: { include_usage: true } })
        .finalChatCompletion()
    : await sdk.openai.chat.completions.create(params);
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
    ? await sdk.openai.responses.stream(params).finalResponse()
    : await sdk.openai.responses.create(params);
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
    ? await sdk.anthropic.messages.stream(params).finalMessage()
    : await sdk.anthropic.messages.create(params);
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
