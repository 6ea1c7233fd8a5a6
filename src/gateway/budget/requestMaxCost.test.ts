import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateInputTokens, inputTokensBound } from '../../formats/index.js';
import { toPriceMicro } from '../../money/index.js';
import { requestMaxCost, requestMaxCostBound } from './requestMaxCost.js';

const PRICE = toPriceMicro({ inputUsdPerMillion: 3, outputUsdPerMillion: 15 });

// Texts of every kind the tokenizer splits differently: prose, code, digits, whitespace runs,
// emoji and other astral characters, lone surrogates, special-token text, long repeats.
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({
    unit: fc.constantFrom('a', ' ', '\n', '1', '.', '{', 'é', '😀', '\ud800', 'の'),
    maxLength: 400,
  }),
  fc.constantFrom('<|endoftext|>', '<|im_start|>user', '    def f(x):\n        return x\n', ''),
  fc.string({ unit: fc.constantFrom('ab', 'x', '0'), minLength: 100, maxLength: 3000 }),
);

const chatBody = fc.record({
  system: fc.option(text, { nil: undefined }),
  turns: fc.array(fc.record({ role: fc.constantFrom('user', 'assistant'), content: text }), {
    minLength: 1,
    maxLength: 6,
  }),
  tools: fc.array(fc.record({ name: fc.stringMatching(/^[a-z_]{1,20}$/), description: text }), {
    maxLength: 3,
  }),
  image: fc.boolean(),
  maxTokens: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }),
});

type ChatCase = typeof chatBody extends fc.Arbitrary<infer T> ? T : never;

function chat(c: ChatCase): Record<string, unknown> {
  const messages: unknown[] = [];
  if (c.system !== undefined) messages.push({ role: 'system', content: c.system });
  for (const turn of c.turns) messages.push(turn);
  if (c.image) {
    messages.push({
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      ],
    });
  }
  return {
    model: 'm',
    messages,
    ...(c.tools.length > 0
      ? {
          tools: c.tools.map((tool) => ({
            type: 'function',
            function: {
              ...tool,
              parameters: { type: 'object', properties: { q: { type: 'string' } } },
            },
          })),
        }
      : {}),
    ...(c.maxTokens !== undefined ? { max_tokens: c.maxTokens } : {}),
  };
}

function messages(c: ChatCase): Record<string, unknown> {
  return {
    model: 'm',
    max_tokens: c.maxTokens ?? 1000,
    ...(c.system !== undefined ? { system: c.system } : {}),
    messages: c.turns.map((turn) => ({ role: turn.role, content: turn.content || '.' })),
  };
}

function responses(c: ChatCase): Record<string, unknown> {
  return {
    model: 'm',
    ...(c.system !== undefined ? { instructions: c.system } : {}),
    input: c.turns.map((turn) => ({ role: turn.role, content: turn.content })),
  };
}

const runs = Number(process.env.SVC_PROPERTY_RUNS ?? 1) * 200;

describe('the reservation bound that counts no tokens', () => {
  it('is never below the counted estimate, for any text, message, tool or image', () => {
    fc.assert(
      fc.property(chatBody, (c) => {
        const cases = [
          ['chat', '/v1/chat/completions', chat(c)],
          ['messages', '/v1/messages', messages(c)],
          ['responses', '/v1/responses', responses(c)],
        ] as const;
        for (const [format, path, body] of cases) {
          expect(inputTokensBound(format, body)).toBeGreaterThanOrEqual(
            estimateInputTokens(format, body),
          );
          const exact = requestMaxCost(path, body, PRICE);
          expect(exact).not.toBeNull();
          expect(requestMaxCostBound(path, body, PRICE)).toBeGreaterThanOrEqual(exact as bigint);
        }
      }),
      { numRuns: runs },
    );
  });

  it('equals the counted size when input is free, and is null where counting is', () => {
    const body = chat({
      system: 'Be brief.',
      turns: [{ role: 'user', content: 'How many tokens is this sentence, roughly?' }],
      tools: [],
      image: false,
      maxTokens: 300,
    });
    const free = toPriceMicro({ inputUsdPerMillion: 0, outputUsdPerMillion: 15 });
    expect(requestMaxCostBound('/v1/chat/completions', body, free)).toBe(
      requestMaxCost('/v1/chat/completions', body, free),
    );
    expect(requestMaxCostBound('/v1/chat/completions', body, PRICE)).toBeGreaterThan(
      requestMaxCost('/v1/chat/completions', body, PRICE) as bigint,
    );
    for (const price of [free, PRICE]) {
      expect(requestMaxCost('/v1/chat/completions', { model: 'm' }, price)).toBeNull();
      expect(requestMaxCostBound('/v1/chat/completions', { model: 'm' }, price)).toBeNull();
      expect(requestMaxCostBound('/v1/images/generations', body, price)).toBeNull();
    }
  });
});
