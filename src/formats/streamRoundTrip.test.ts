/**
 * Property: any answer rendered as a stream in format A, translated to B and assembled again
 * keeps its text, reasoning, tool calls (ids, names, arguments), stop reason and usage; and
 * replaying a whole answer as a stream (responseAsStream) agrees with translating it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelResponse, StopReason } from './model.js';
import { renderResponseStream } from './stream/responseAsStream.js';
import {
  assembleResponse,
  parseResponse,
  renderResponse,
  responseAsStream,
} from './translateResponse.js';
import { API_FORMATS, type ApiFormat } from './types.js';
import { usageOf } from './usage.js';

const text = fc.string({ minLength: 1, maxLength: 40 });
const part = fc.oneof(
  text.map((t) => ({ type: 'text' as const, text: t })),
  text.map((t) => ({ type: 'reasoning' as const, text: t })),
  fc
    .record({
      id: fc.stringMatching(/^call_[A-Za-z0-9]{1,8}$/),
      name: fc.stringMatching(/^[a-z][a-z_]{0,10}$/),
      args: fc.dictionary(
        fc.stringMatching(/^[a-z]{1,6}$/),
        fc.oneof(fc.integer(), fc.string({ maxLength: 6 })),
        { maxKeys: 3 },
      ),
    })
    .map((c) => ({
      type: 'tool_call' as const,
      id: c.id,
      name: c.name,
      arguments: JSON.stringify(c.args),
    })),
);

/**
 * Chat holds one reasoning text, one content text and then tool calls, so answers crossing chat
 * are generated in that canonical order.
 */
function canonicalForChat(parts: ModelResponse['parts']): ModelResponse['parts'] {
  const reasoning = parts.find((p) => p.type === 'reasoning');
  const text = parts.find((p) => p.type === 'text');
  return [
    ...(reasoning ? [reasoning] : []),
    ...(text ? [text] : []),
    ...parts.filter((p) => p.type === 'tool_call'),
  ];
}

const answerFor = (pair: [ApiFormat, ApiFormat]) =>
  answer.map((r) => (pair.includes('chat') ? { ...r, parts: canonicalForChat(r.parts) } : r));

const answer: fc.Arbitrary<ModelResponse> = fc
  .record({
    parts: fc.array(part, { maxLength: 5 }),
    long: fc.boolean(),
    input: fc.integer({ min: 0, max: 100_000 }),
    cachedShare: fc.double({ min: 0, max: 1, noNaN: true }),
    output: fc.integer({ min: 0, max: 10_000 }),
  })
  .map((g) => {
    // Adjacent texts merge in formats without separate text blocks; keep blocks distinct.
    const parts = g.parts.filter(
      (p, i) => !(p.type !== 'tool_call' && g.parts[i - 1]?.type === p.type),
    );
    const ids = new Set<string>();
    const unique = parts.filter((p) => p.type !== 'tool_call' || (!ids.has(p.id) && ids.add(p.id)));
    const hasCalls = unique.some((p) => p.type === 'tool_call');
    const stopReason: StopReason = g.long ? 'max_tokens' : hasCalls ? 'tool_use' : 'end_turn';
    const cached = Math.floor(g.input * g.cachedShare);
    return {
      id: 'seller-id',
      model: 'seller-model',
      created: 1_760_000_000,
      parts: unique,
      stopReason,
      usage: {
        inputTokens: g.input,
        cachedInputTokens: cached,
        cacheCreationInputTokens: 0,
        outputTokens: g.output,
      },
    };
  });

function comparable(resp: ModelResponse) {
  return {
    parts: resp.parts.map((p) =>
      p.type === 'tool_call'
        ? { ...p, arguments: JSON.parse(p.arguments) }
        : { type: p.type, text: p.text },
    ),
    stopReason: resp.stopReason,
  };
}

const pairs: Array<[ApiFormat, ApiFormat]> = API_FORMATS.flatMap((a) =>
  API_FORMATS.map((b): [ApiFormat, ApiFormat] => [a, b]),
);

describe.each(pairs)('stream %s -> %s', (a, b) => {
  it('assembles back to the same answer', async () => {
    await fc.assert(
      fc.asyncProperty(answerFor([a, b]), async (resp) => {
        const events = renderResponseStream(resp, a);
        const body = await assembleResponse(events, a, b);
        expect(comparable(parseResponse(body, b))).toEqual(comparable(resp));
        expect(usageOf(b, body)).toEqual({
          inputTokens: resp.usage.inputTokens,
          cachedInputTokens: resp.usage.cachedInputTokens,
          outputTokens: resp.usage.outputTokens,
        });
      }),
      { numRuns: 60 },
    );
  });

  it('responseAsStream agrees with translating the whole answer', async () => {
    await fc.assert(
      fc.asyncProperty(answerFor([a, b]), async (resp) => {
        const whole = renderResponse(resp, a);
        const assembled = await assembleResponse(responseAsStream(whole, a, b), b);
        expect(comparable(parseResponse(assembled, b))).toEqual(comparable(resp));
      }),
      { numRuns: 30 },
    );
  });
});
