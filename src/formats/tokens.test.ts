import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSvcError } from '../errors/index.js';
import {
  countTextTokens,
  countTokens,
  estimateInputTokens,
  rankMapOf,
  TOKENS_PER_IMAGE,
} from './tokens.js';
import { translateRequest } from './translateRequest.js';

describe('token counting', () => {
  it('counts text with o200k_base', () => {
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('Hello world')).toBe(2);
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
    expect(countTextTokens(long)).toBe(countTextTokens(long));
    expect(countTextTokens(long)).toBeGreaterThan(300);
  });

  it('answers count_tokens from a messages body without max_tokens', () => {
    const base = { model: 'claude', messages: [{ role: 'user', content: 'Hello world' }] };
    const plain = countTokens(base).input_tokens;
    expect(plain).toBe(2 + 3 + 3);
    const withSystem = countTokens({ ...base, system: 'You are terse.' }).input_tokens;
    expect(withSystem).toBeGreaterThan(plain);
    const withTool = countTokens({
      ...base,
      tools: [
        {
          name: 'get_weather',
          description: 'Weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
    }).input_tokens;
    expect(withTool).toBeGreaterThan(plain + 8);
    const withImage = countTokens({
      ...base,
      messages: [
        {
          role: 'user',
          content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }],
        },
      ],
    }).input_tokens;
    expect(withImage).toBe(TOKENS_PER_IMAGE + 3 + 3);
  });

  it('rejects an invalid count_tokens body naming the field', () => {
    let caught: unknown;
    try {
      countTokens({ model: 'claude', messages: [{ role: 'robot', content: 'x' }] });
    } catch (error) {
      caught = error;
    }
    expect(isSvcError(caught) && [caught.status, caught.details?.param]).toEqual([
      400,
      'messages[0].role',
    ]);
  });

  it('estimates the same conversation alike in every format', () => {
    const chat = {
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is the weather in Paris?' },
      ],
    };
    const n = estimateInputTokens('chat', chat);
    expect(estimateInputTokens('messages', translateRequest(chat, 'chat', 'messages').body)).toBe(
      n,
    );
    expect(estimateInputTokens('responses', translateRequest(chat, 'chat', 'responses').body)).toBe(
      n,
    );
  });
});

describe('the o200k_base rank map (built without js-tiktoken decode tables)', () => {
  it('equals the rank map js-tiktoken builds, and counts the same tokens', async () => {
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    const lite = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
    const file = require('js-tiktoken/ranks/o200k_base') as ConstructorParameters<
      typeof lite.Tiktoken
    >[0];
    const reference = new lite.Tiktoken(file);
    const expected = (reference as unknown as { rankMap: Map<string, number> }).rankMap;
    const ours = rankMapOf(file);
    expect(ours.size).toBe(expected.size);
    let mismatches = 0;
    for (const [key, rank] of expected) {
      const latin1 = String.fromCharCode(...key.split(',').map(Number));
      if (ours.get(latin1) !== rank) mismatches++;
    }
    expect(mismatches).toBe(0);
    const texts = [
      'Hello world',
      'héllo wörld — 你好，世界! 🙂👍🏽 \u0000\t\r\n  spaced   out  ',
      'function f(x) { return x ** 2; } // comment\n\tconst y = [1, 2, 3];',
      '<|endoftext|> special tokens are counted as text',
      'a'.repeat(500),
    ];
    for (const text of texts) {
      expect(countTextTokens(text), text).toBe(reference.encode(text, 'all').length);
    }
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
        expect(countTextTokens(text)).toBe(reference.encode(text, 'all').length);
      }),
      { numRuns: 300 },
    );
  });
});
