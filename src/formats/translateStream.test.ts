import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSvcError } from '../errors/index.js';
import { formatSse, parseSse, type SseEvent } from './sse.js';
import { RESPONSES, STREAMS } from './testing/samples.js';
import { assembleResponse, translateResponse } from './translateResponse.js';
import { translateStream } from './translateStream.js';
import { API_FORMATS } from './types.js';
import { createStreamUsageAccumulator, usageOf } from './usage.js';

async function collect(events: AsyncIterable<SseEvent> | Iterable<SseEvent>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** Replaces ids we generate and timestamps, so two runs compare equal. */
function normalise(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value)
      .replace(/"(chatcmpl-|resp_|msg_|rs_|fc_)[a-z0-9]{6,}"/g, '"$1ID"')
      .replace(/"(created|created_at)":\d+/g, '"$1":0'),
  );
}

const eventsOf = (events: SseEvent[]) =>
  events.map((e) => ({
    event: e.event,
    data: normalise(JSON.parse(e.data === '[DONE]' ? '"[DONE]"' : e.data)),
  }));

describe('usage', () => {
  it.each(API_FORMATS)('usageOf(%s) counts cached tokens inside input tokens', (format) => {
    for (const sample of ['text', 'tool'] as const) {
      expect(usageOf(format, RESPONSES[format][sample])).toEqual({
        inputTokens: 125,
        cachedInputTokens: 100,
        outputTokens: 15,
      });
    }
  });

  it.each(API_FORMATS)('the stream accumulator reads %s streams', (format) => {
    const acc = createStreamUsageAccumulator(format);
    for (const e of STREAMS[format].tool) acc.push(e);
    expect(acc.complete).toBe(true);
    expect(acc.reported).toBe(true);
    expect(acc.usage()).toEqual({ inputTokens: 125, cachedInputTokens: 100, outputTokens: 15 });
  });
});

describe('assembling a response from a stream', () => {
  for (const from of API_FORMATS) {
    for (const to of API_FORMATS) {
      it(`${from} stream -> ${to} response equals the translated ${from} response`, async () => {
        for (const sample of ['text', 'tool'] as const) {
          const assembled = await assembleResponse(STREAMS[from][sample], from, to, { model: 'm' });
          const direct = translateResponse(
            RESPONSES[from][sample],
            from,
            to === from ? (from === 'chat' ? 'responses' : 'chat') : to,
            { model: 'm' },
          );
          if (to !== from) expect(normalise(assembled)).toEqual(normalise(direct));
          expect(usageOf(to, assembled)).toEqual({
            inputTokens: 125,
            cachedInputTokens: 100,
            outputTokens: 15,
          });
        }
      });
    }
  }

  it('throws the seller error with its status when the stream carries one', async () => {
    const events = [
      STREAMS.messages.text[0] as SseEvent,
      {
        event: 'error',
        data: '{"type":"error","error":{"type":"overloaded_error","message":"busy"}}',
      },
    ];
    const error = await assembleResponse(events, 'messages', 'chat').catch((e: unknown) => e);
    expect(isSvcError(error) && [error.status, error.message]).toEqual([529, 'busy']);
  });

  it('throws 502 invalid_seller_response for a truncated stream', async () => {
    const error = await assembleResponse(STREAMS.chat.text.slice(0, 3), 'chat', 'messages').catch(
      (e: unknown) => e,
    );
    expect(isSvcError(error) && [error.status, error.code]).toEqual([
      502,
      'invalid_seller_response',
    ]);
  });
});

describe('stream translation', () => {
  it('numbers parallel tool calls as separate blocks, one open at a time', async () => {
    const chunk = (delta: unknown, finish: string | null = null) => ({
      data: JSON.stringify({
        id: 'c',
        model: 'g',
        choices: [{ index: 0, delta, finish_reason: finish }],
      }),
    });
    const events = [
      chunk({ role: 'assistant' }),
      chunk({
        tool_calls: [
          { index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({
        tool_calls: [
          { index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } },
        ],
      }),
      chunk({}, 'tool_calls'),
      { data: '[DONE]' },
    ];
    const out = await collect(translateStream(events, 'chat', 'messages'));
    expect(out.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const starts = out
      .filter((e) => e.event === 'content_block_start')
      .map((e) => JSON.parse(e.data));
    expect(starts.map((s) => [s.index, s.content_block.id, s.content_block.name])).toEqual([
      [0, 'a', 'f'],
      [1, 'b', 'g'],
    ]);
    expect(JSON.parse(out.at(-2)?.data ?? '{}').delta.stop_reason).toBe('tool_use');
  });

  it('carries thinking as chat reasoning_content and responses reasoning summaries', async () => {
    const m = (type: string, body: Record<string, unknown>) => ({
      event: type,
      data: JSON.stringify({ type, ...body }),
    });
    const events = [
      STREAMS.messages.text[0] as SseEvent,
      m('content_block_start', {
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
      m('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } }),
      m('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
      m('content_block_stop', { index: 0 }),
      ...STREAMS.messages.text
        .slice(1)
        .map((e) => ({ ...e, data: e.data.replace('"index":0', '"index":1') })),
    ];
    const chat = await collect(translateStream(events, 'messages', 'chat'));
    expect(
      chat
        .map((e) =>
          e.data === '[DONE]'
            ? undefined
            : JSON.parse(e.data).choices?.[0]?.delta?.reasoning_content,
        )
        .filter(Boolean),
    ).toEqual(['Hmm.']);
    expect(
      chat
        .map((e) =>
          e.data === '[DONE]' ? '' : (JSON.parse(e.data).choices?.[0]?.delta?.content ?? ''),
        )
        .join(''),
    ).toBe('Hello there!');
    const responses = await assembleResponse(events, 'messages', 'responses');
    expect((responses.output as Array<{ type: string; summary?: unknown }>)[0]).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Hmm.' }],
    });
  });

  it('turns malformed seller events into the client error event and stops', async () => {
    const events = [
      STREAMS.chat.text[0] as SseEvent,
      { data: '{not json' },
      STREAMS.chat.text[1] as SseEvent,
    ];
    const out = await collect(translateStream(events, 'chat', 'messages'));
    const last = out.at(-1);
    expect(last?.event).toBe('error');
    expect(JSON.parse(last?.data ?? '{}').error).toMatchObject({
      type: 'api_error',
      code: 'invalid_seller_response',
    });
    const same = await collect(translateStream(events, 'chat', 'chat'));
    expect(JSON.parse(same.at(-2)?.data ?? '{}').error.code).toBe('invalid_seller_response');
    expect(same.at(-1)?.data).toBe('[DONE]');
  });

  it('leaves out the chat usage chunk when the client did not ask for it', async () => {
    const out = await collect(
      translateStream(STREAMS.messages.text, 'messages', 'chat', { includeUsage: false }),
    );
    expect(out.some((e) => e.data.includes('"usage"'))).toBe(false);
    expect(out.at(-1)?.data).toBe('[DONE]');
  });

  it('hides the usage chunk of a chat pass-through stream when the client did not ask for it', async () => {
    const out = await collect(
      translateStream(STREAMS.chat.text, 'chat', 'chat', { includeUsage: false }),
    );
    expect(out).toEqual(STREAMS.chat.text.filter((e) => !e.data.includes('"choices":[]')));
  });

  it('passes a same-format stream through untouched', async () => {
    for (const format of API_FORMATS) {
      expect(await collect(translateStream(STREAMS[format].tool, format, format))).toEqual(
        STREAMS[format].tool,
      );
    }
  });

  it('gives identical output whatever the byte boundaries of the seller stream (property)', async () => {
    const encoder = new TextEncoder();
    for (const from of API_FORMATS) {
      const bytes = encoder.encode(STREAMS[from].tool.map(formatSse).join(''));
      for (const to of API_FORMATS) {
        const whole = eventsOf(await collect(translateStream(parseSse([bytes]), from, to)));
        await fc.assert(
          fc.asyncProperty(
            fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }),
            async (cuts) => {
              const sorted = [...cuts].sort((x, y) => x - y);
              const chunks: Uint8Array[] = [];
              let at = 0;
              for (const cut of sorted) {
                chunks.push(bytes.slice(at, cut));
                at = cut;
              }
              chunks.push(bytes.slice(at));
              expect(eventsOf(await collect(translateStream(parseSse(chunks), from, to)))).toEqual(
                whole,
              );
            },
          ),
          { numRuns: 25 },
        );
      }
    }
  });
});

describe('chat streams with interleaved content', () => {
  it('text after a tool call becomes a new block, never a delta on a closed one', async () => {
    const chunk = (delta: unknown, finish: string | null = null) => ({
      data: JSON.stringify({
        id: 'c',
        model: 'g',
        choices: [{ index: 0, delta, finish_reason: finish }],
      }),
    });
    const events = [
      chunk({ role: 'assistant', content: 'A' }),
      chunk({
        tool_calls: [
          { index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
        ],
      }),
      chunk({ content: 'B' }),
      chunk({}, 'tool_calls'),
      { data: '[DONE]' },
    ];
    const out = (await collect(translateStream(events, 'chat', 'messages'))).map((e) =>
      JSON.parse(e.data),
    );
    const closed = new Set<number>();
    for (const e of out) {
      if (e.type === 'content_block_stop') closed.add(e.index);
      if (e.type === 'content_block_delta') expect(closed.has(e.index)).toBe(false);
    }
    expect(
      out.filter((e) => e.type === 'content_block_start').map((e) => e.content_block.type),
    ).toEqual(['text', 'tool_use', 'text']);
  });
});
