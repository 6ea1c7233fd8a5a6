import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countTextTokens } from './tokens.js';
import { PIECE_CACHE_CHARS, PieceCache } from './tokensPieceCache.js';
import { tablesComplete, tablesNow } from './tokensTables.js';

const require = createRequire(import.meta.url);
const lite = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
const reference = new lite.Tiktoken(
  require('js-tiktoken/ranks/o200k_base') as ConstructorParameters<typeof lite.Tiktoken>[0],
);
const exact = (text: string) => reference.encode(text, 'all').length;

// Pieces that repeat (so counts come from the cache) in every alphabet the splitter treats apart.
const VOCABULARY = [
  ' the',
  ' function',
  'function',
  '    ',
  '\t\t',
  '\n',
  '\r\n',
  ' reputation',
  "'s",
  "'LL",
  ' naïve',
  ' café',
  ' 你好',
  '世界',
  ' 🙂',
  '🙂🙂',
  ' Привет',
  '12345',
  '3.14',
  ' (x)',
  '=>',
  ' {',
  '});',
  ' ABCdef',
  'xQzj',
  ' ',
  '  ',
  '<|endoftext|>',
];

/** The whole string as the piece. */
function lookup(cache: PieceCache, piece: string, tables: object): number {
  return cache.get(piece, 0, piece.length, tables);
}

function keep(cache: PieceCache, piece: string, count: number): void {
  cache.remember(piece, 0, piece.length, count);
}

describe('piece cache (decision 156)', () => {
  it('counts exactly as js-tiktoken, however texts repeat and mix their pieces', async () => {
    const piece = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...VOCABULARY) },
      { weight: 1, arbitrary: fc.string({ maxLength: PIECE_CACHE_CHARS + 4 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
      {
        weight: 1,
        arbitrary: fc.integer({ min: 1, max: 40 }).map((n) => randomBytes(n).toString('base64')),
      },
    );
    const property = fc.property(fc.array(piece, { minLength: 1, maxLength: 80 }), (pieces) => {
      const text = pieces.join('');
      const expected = exact(text);
      // Twice: the second count takes every short piece from the cache.
      expect(countTextTokens(text)).toBe(expected);
      expect(countTextTokens(`${text} `)).toBe(exact(`${text} `));
    });
    // Merges looked up by bytes (short texts only), then by rank pairs once the index is built.
    fc.assert(property, { numRuns: 200 });
    expect((await tablesComplete()).pairs.complete).toBe(true);
    fc.assert(property, { numRuns: 200 });
  });

  it('stays exact on prose after text that made it rest, and on prose after that', () => {
    const prose = (n: number) => Array.from({ length: n }, (_, i) => VOCABULARY[i % 20]).join('');
    expect(countTextTokens(`a${prose(400)}`)).toBe(exact(`a${prose(400)}`));
    const base64 = randomBytes(9_000).toString('base64'); // one regex window
    expect(countTextTokens(base64)).toBe(exact(base64));
    expect(countTextTokens(`b${prose(900)}`)).toBe(exact(`b${prose(900)}`));
  });

  it('reads a piece in place in a longer text, at any offset', () => {
    const cache = new PieceCache();
    const tables = tablesNow();
    const text = 'call function now';
    expect(cache.get(text, 4, 9, tables)).toBe(-1);
    cache.remember(text, 4, 9, 1);
    expect(lookup(cache, ' function', tables)).toBe(1);
    expect(cache.get('x function', 1, 9, tables)).toBe(1);
    expect(cache.get(text, 4, 8, tables)).toBe(-1);
    expect(cache.get(text, 5, 9, tables)).toBe(-1);
  });

  it('remembers a count, forgets it for other tables, and replaces a piece sharing its slot', () => {
    const cache = new PieceCache();
    const tables = tablesNow();
    expect(lookup(cache, ' function', tables)).toBe(-1);
    keep(cache, ' function', 1);
    expect(lookup(cache, ' function', tables)).toBe(1);
    expect(lookup(cache, ' functions', tables)).toBe(-1);
    // Other tables: nothing remembered.
    const other = { ...tables };
    expect(lookup(cache, ' function', other)).toBe(-1);
    keep(cache, ' function', 7);
    expect(lookup(cache, ' function', other)).toBe(7);
  });

  it('rests after a window of misses: lookups miss without looking, then it tries again', () => {
    const cache = new PieceCache();
    const tables = tablesNow();
    lookup(cache, 'kept', tables);
    keep(cache, 'kept', 1);
    // 255 more distinct pieces: no hit in a window of 256 lookups.
    for (let i = 0; i < 255; i++) lookup(cache, `m${i}`, tables);
    expect(lookup(cache, 'kept', tables)).toBe(-1);
    // A miss while resting is not remembered.
    keep(cache, 'rested', 3);
    let found = -1;
    for (let i = 0; i < 20_000 && found < 0; i++) found = lookup(cache, 'kept', tables);
    expect(found).toBe(1);
    expect(lookup(cache, 'rested', tables)).toBe(-1);
  });
});
