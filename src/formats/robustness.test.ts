/**
 * Property: whatever a seller sends (random JSON, truncated or shuffled real streams), translation
 * never throws anything but an SvcError, and every translated stream ends with the client format's
 * terminal or error event.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSvcError } from '../errors/index.js';
import type { SseEvent } from './sse.js';
import { STREAMS } from './testing/samples.js';
import { translateRequest } from './translateRequest.js';
import { assembleResponse, translateResponse } from './translateResponse.js';
import { translateStream } from './translateStream.js';
import { API_FORMATS, type ApiFormat } from './types.js';

const json = fc.jsonValue({ maxDepth: 4 });
const realEvents = fc.constantFrom(
  ...API_FORMATS.flatMap((f) => [...STREAMS[f].text, ...STREAMS[f].tool]),
);
const randomEvent: fc.Arbitrary<SseEvent> = fc.oneof(
  realEvents,
  fc.record({ data: json.map((v) => JSON.stringify(v)) }),
  fc.record({
    event: fc.constantFrom(
      'message_start',
      'content_block_delta',
      'response.output_text.delta',
      'error',
    ),
    data: fc.string(),
  }),
  fc.constant({ data: '[DONE]' }),
);

function isTerminal(format: ApiFormat, event: SseEvent | undefined): boolean {
  if (!event) return false;
  if (format === 'chat') return event.data === '[DONE]';
  if (format === 'messages') return event.event === 'message_stop' || event.event === 'error';
  return ['response.completed', 'response.incomplete', 'response.failed', 'error'].includes(
    event.event ?? '',
  );
}

const pairs: Array<[ApiFormat, ApiFormat]> = API_FORMATS.flatMap((a) =>
  API_FORMATS.map((b): [ApiFormat, ApiFormat] => [a, b]),
);

describe.each(pairs)('seller %s -> client %s', (from, to) => {
  it('random seller streams end with a terminal or error event, never an exception', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(randomEvent, { maxLength: 12 }), async (events) => {
        const out: SseEvent[] = [];
        for await (const e of translateStream(events, from, to)) out.push(e);
        if (from !== to || out.length > 0) expect(isTerminal(to, out.at(-1))).toBe(true);
        const assembled = await assembleResponse(events, from, to).catch((error: unknown) => {
          expect(isSvcError(error)).toBe(true);
          return undefined;
        });
        if (assembled) expect(typeof assembled).toBe('object');
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 80) },
    );
  });

  it('random seller bodies translate or fail with an SvcError', () => {
    fc.assert(
      fc.property(json, (body) => {
        try {
          translateResponse(body, from, to);
        } catch (error) {
          expect(isSvcError(error)).toBe(true);
        }
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 150) },
    );
  });

  it('random client bodies translate or fail with an SvcError naming a field', () => {
    fc.assert(
      fc.property(json, (body) => {
        try {
          translateRequest(body, from, to);
        } catch (error) {
          expect(isSvcError(error) && error.status).toBe(400);
          expect(isSvcError(error) && typeof error.details?.param).toBe('string');
        }
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 150) },
    );
  });
});

/** Replaces the value at the `pick`-th node (depth-first) of `value` with `replacement`. */
function mutate(value: unknown, pick: number, replacement: unknown): unknown {
  let n = 0;
  const walk = (v: unknown): unknown => {
    if (n++ === pick) return replacement;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value);
}

const REQUESTS: Record<ApiFormat, unknown> = {
  chat: {
    model: 'm',
    messages: [
      { role: 'system', content: 'sys' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image_url', image_url: { url: 'https://x.test/a.png' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ],
    tools: [
      { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } },
    ],
    tool_choice: 'auto',
    max_tokens: 100,
    stream: true,
  },
  responses: {
    model: 'm',
    instructions: 'sys',
    input: [
      { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
    ],
    tools: [
      {
        type: 'function',
        name: 'f',
        parameters: { type: 'object', properties: {} },
        strict: false,
      },
    ],
    max_output_tokens: 100,
  },
  messages: {
    model: 'm',
    max_tokens: 100,
    system: [{ type: 'text', text: 'sys' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'f', input: { a: 1 } }] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'ok', is_error: true }],
      },
    ],
    tools: [{ name: 'f', input_schema: { type: 'object', properties: {} } }],
    thinking: { type: 'enabled', budget_tokens: 2048 },
  },
};

describe.each(pairs)('mutated %s requests to %s', (from, to) => {
  it('translate or fail with a 400 naming a field', () => {
    fc.assert(
      fc.property(fc.nat({ max: 60 }), json, (pick, replacement) => {
        try {
          translateRequest(mutate(REQUESTS[from], pick, replacement), from, to);
        } catch (error) {
          expect(isSvcError(error) && [error.status, typeof error.details?.param]).toEqual([
            400,
            'string',
          ]);
        }
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 200) },
    );
  });
});
