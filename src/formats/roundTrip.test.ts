/**
 * Property: a random valid request in format A survives A -> B -> A unchanged wherever the
 * mapping is lossless (the generator only builds what every format of the pair can carry).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Conversation, Part, Turn } from './model.js';
import { renderRequest, translateRequest } from './translateRequest.js';
import { API_FORMATS, type ApiFormat } from './types.js';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const text = fc.string({ minLength: 1, maxLength: 30 });
const name = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);
const jsonArgs = fc
  .dictionary(name, fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean()), {
    maxKeys: 3,
  })
  .map((o) => JSON.stringify(o));
const image = fc.constantFrom<Part>(
  { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } },
  { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG } },
);

const pdf = fc.constant<Part>({
  type: 'document',
  source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0xLjQK' },
  filename: 'report.pdf',
});

/** Conversations every format can carry without loss. */
function conversation(pair: [ApiFormat, ApiFormat]): fc.Arbitrary<Conversation> {
  const hasMessages = pair.includes('messages');
  const hasResponses = pair.includes('responses');
  const userParts = fc.array(
    fc.oneof(
      text.map((t): Part => ({ type: 'text', text: t })),
      image,
      pdf,
    ),
    {
      minLength: 1,
      maxLength: 3,
    },
  );
  const exchange = fc.record({
    user: userParts,
    answer: fc.option(text, { nil: undefined }),
    calls: fc.array(fc.record({ name, args: jsonArgs, result: text }), { maxLength: 2 }),
    after: fc.option(text, { nil: undefined }),
  });
  return fc
    .record({
      system: fc.array(text, { maxLength: hasResponses ? 1 : 2 }),
      exchanges: fc.array(exchange, { minLength: 1, maxLength: 3 }),
      last: text,
      tools: fc.uniqueArray(fc.record({ name, description: text, strict: fc.boolean() }), {
        selector: (t) => t.name,
        maxLength: 2,
      }),
      choice: fc.constantFrom('unset', 'auto', 'none', 'required', 'tool'),
      noParallel: fc.boolean(),
      maxOutputTokens: fc.integer({ min: 30_000, max: 60_000 }),
      temperature: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
      topP: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
      stop: fc.option(fc.array(text, { minLength: 1, maxLength: 3 }), { nil: undefined }),
      effort: fc.constantFrom(undefined, 'low', 'medium', 'high'),
      schema: fc.boolean(),
      user: fc.option(text, { nil: undefined }),
      stream: fc.boolean(),
    })
    .map((g): Conversation => {
      const turns: Turn[] = [];
      let callNo = 0;
      for (const ex of g.exchanges) {
        const pending = turns.at(-1);
        if (pending?.role === 'user') pending.parts.push(...ex.user);
        else turns.push({ role: 'user', parts: ex.user });
        const calls = ex.calls.map((c) => ({ ...c, id: `call_${callNo++}` }));
        const assistant: Part[] = [];
        if (ex.answer !== undefined || calls.length === 0)
          assistant.push({ type: 'text', text: ex.answer ?? 'ok' });
        for (const c of calls)
          assistant.push({ type: 'tool_call', id: c.id, name: c.name, arguments: c.args });
        turns.push({ role: 'assistant', parts: assistant });
        if (calls.length > 0) {
          const results: Part[] = calls.map((c) => ({
            type: 'tool_result',
            callId: c.id,
            content: [{ type: 'text', text: c.result }],
          }));
          if (ex.after !== undefined) results.push({ type: 'text', text: ex.after });
          turns.push({ role: 'user', parts: results });
        }
      }
      const lastTurn = turns.at(-1);
      if (lastTurn?.role === 'user') lastTurn.parts.push({ type: 'text', text: g.last });
      else turns.push({ role: 'user', parts: [{ type: 'text', text: g.last }] });

      const conv: Conversation = {
        model: 'model-x',
        system: g.system,
        turns,
        tools: g.tools.map((t) => ({
          ...t,
          parameters: { type: 'object', properties: { q: { type: 'string' } } },
        })),
        maxOutputTokens: g.maxOutputTokens,
        stream: g.stream,
      };
      const first = g.tools[0];
      if (g.choice === 'tool' && first) conv.toolChoice = { type: 'tool', name: first.name };
      else if (g.choice !== 'unset' && g.choice !== 'tool') conv.toolChoice = { type: g.choice };
      if (g.noParallel && conv.toolChoice && conv.toolChoice.type !== 'none')
        conv.parallelToolCalls = false;
      // Anthropic refuses temperature with top_p, and sampling parameters with thinking.
      if (g.temperature !== undefined && !(hasMessages && g.effort))
        conv.temperature = g.temperature;
      if (g.topP !== undefined && !(hasMessages && (g.effort || conv.temperature !== undefined))) {
        conv.topP = g.topP;
      }
      if (g.stop && !hasResponses) conv.stop = g.stop;
      // Thinking needs signed thinking blocks beside earlier tool calls and an unforced tool choice.
      const forced = conv.toolChoice?.type === 'required' || conv.toolChoice?.type === 'tool';
      const calls = turns.some((t) => t.parts.some((p) => p.type === 'tool_call'));
      if (g.effort && !(hasMessages && (forced || calls))) {
        conv.reasoning = { enabled: true, effort: g.effort };
      }
      if (g.schema) {
        conv.outputFormat = hasMessages
          ? { type: 'json_schema', name: 'output', schema: { type: 'object' }, strict: true }
          : {
              type: 'json_schema',
              name: 'answer',
              schema: { type: 'object' },
              strict: true,
              description: 'd',
            };
      }
      if (g.user !== undefined) conv.user = g.user;
      return conv;
    });
}

const pairs: Array<[ApiFormat, ApiFormat]> = API_FORMATS.flatMap((a) =>
  API_FORMATS.filter((b) => b !== a).map((b): [ApiFormat, ApiFormat] => [a, b]),
);

describe.each(pairs)('%s -> %s -> back', (a, b) => {
  it('is lossless for requests both formats can carry', () => {
    fc.assert(
      fc.property(conversation([a, b]), (conv) => {
        const original = renderRequest(conv, a);
        const there = translateRequest(original, a, b);
        const back = translateRequest(there.body, b, a);
        // chat streams gain include_usage on the way back (the buyer needs usage); compare without it.
        if (a === 'chat' && conv.stream) {
          expect(back.body.stream_options).toEqual({ include_usage: true });
        }
        expect(back.body).toEqual(original);
      }),
      { numRuns: 150 },
    );
  });
});
