import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { countTextTokens, countTextTokensAsync } from './tokens.js';
import { BPE_CHUNK_BYTES, REGEX_WINDOW_CHARS, TokenCounter } from './tokensBpe.js';
import { tablesComplete, tablesNow } from './tokensTables.js';

const require = createRequire(import.meta.url);
const lite = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
const reference = new lite.Tiktoken(
  require('js-tiktoken/ranks/o200k_base') as ConstructorParameters<typeof lite.Tiktoken>[0],
);
const exact = (text: string) => reference.encode(text, 'all').length;

function letters(length: number): string {
  let text = '';
  for (const byte of randomBytes(length)) text += String.fromCharCode(97 + (byte % 26));
  return text;
}

describe('bounded token counting (decision 100)', () => {
  it('is exact on prose and code spanning many regex windows', () => {
    const parts = [
      'The quick brown fox — naïve café, 你好世界 🙂 — jumps over the lazy dog.\n',
      'function f(x) {\n\treturn x ** 2; // square\n}\n\n',
      '    indented   with\t\ttabs   and  spaces \r\n',
      "It's what we'd do; THEY'LL SEE. <|endoftext|> 12345678 3.14159\n",
    ];
    let text = '';
    for (let i = 0; text.length < REGEX_WINDOW_CHARS * 3; i++) text += parts[i % parts.length];
    expect(countTextTokens(text)).toBe(exact(text));
  });

  it('is exact on adversarial pre-tokens up to one chunk', () => {
    for (const text of [
      'x'.repeat(BPE_CHUNK_BYTES),
      letters(BPE_CHUNK_BYTES),
      'ABCDEFGHIJ'.repeat(50),
      randomBytes(2_000).toString('base64'),
      randomBytes(1_500).toString('hex'),
      `${' '.repeat(300)}x`,
      '🙂'.repeat(100),
    ]) {
      expect(countTextTokens(text), text.slice(0, 20)).toBe(exact(text));
    }
  });

  it('merges by rank pairs exactly as by bytes, on mixed alphabets up to one chunk', async () => {
    expect((await tablesComplete()).pairs.complete).toBe(true);
    const alphabets = ['ab', 'abcdefghijklmnopqrstuvwxyz', 'aAbBcC01', 'ACGT', '0123456789abcdef'];
    for (let round = 0; round < 60; round++) {
      const alphabet = alphabets[round % alphabets.length] as string;
      const length = 1 + (randomBytes(2).readUInt16LE() % BPE_CHUNK_BYTES);
      let text = '';
      for (const byte of randomBytes(length)) text += alphabet[byte % alphabet.length];
      expect(countTextTokens(text), text.slice(0, 20)).toBe(exact(text));
    }
  });

  it('indexes every split of a token into two tokens, and nothing else', async () => {
    const { ranks, pairs } = await tablesComplete();
    let splits = 0;
    for (const [bytes, rank] of ranks) {
      for (let split = 1; split < bytes.length; split++) {
        const left = ranks.get(bytes.slice(0, split));
        const right = ranks.get(bytes.slice(split));
        if (left === undefined || right === undefined) continue;
        splits++;
        if (pairs.rankOf(left, right) !== rank) expect([bytes, split]).toBe(rank);
      }
    }
    expect(splits).toBeGreaterThan(400_000);
    // Every o200k_base token is reached by merging its own bytes: no piece needs hashing.
    expect(pairs.everyTokenMerges).toBe(true);
    const [a, b] = [ranks.get('qu') as number, ranks.get('xy') as number];
    expect(ranks.has('quxy')).toBe(false);
    expect(pairs.rankOf(a, b)).toBe(-1);
    expect(pairs.byteRank[0x61]).toBe(ranks.get('a'));
    expect(pairs.twoByte[(0x69 << 8) | 0x6e]).toBe(ranks.get('in'));
  });

  it('is within 1 % on whitespace-free text longer than a chunk', () => {
    for (const text of ['x'.repeat(2_000), letters(1_500), randomBytes(6_000).toString('base64')]) {
      const expected = exact(text);
      const ours = countTextTokens(text);
      expect(Math.abs(ours - expected) / expected, text.slice(0, 20)).toBeLessThanOrEqual(0.01);
    }
  });

  it('counts a megabyte of whitespace-free text, and the async count agrees and yields', async () => {
    const text = `${letters(16)}${'x'.repeat(1024 * 1024)}`;
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    const counted = await countTextTokensAsync(text);
    clearInterval(ticker);
    // The event loop ran other callbacks while the megabyte was counted.
    expect(turns).toBeGreaterThan(0);
    expect(counted).toBe(countTextTokens(text));
    expect(counted).toBeGreaterThan(100_000);
  });

  it('concurrent async counts each get their own total', async () => {
    // Counters share their regexes: interleaved steps over different texts must not disturb each other.
    const prose = (i: number) => `Item ${i}: it's a test, of pieces <|endoftext|> and 12345.\n`;
    const texts = Array.from({ length: 4 }, (_, i) =>
      i % 2 === 0
        ? `${i}${letters(40_000)}`
        : Array.from({ length: 900 }, (_, j) => prose(i * j)).join(''),
    );
    const counts = await Promise.all(texts.map((text) => countTextTokensAsync(text)));
    expect(counts).toEqual(texts.map((text) => countTextTokens(text)));
  });

  it('skips what no alternative of the pattern matches, and empty matches, as a global search does', () => {
    const count = (text: string, pattern: string) => {
      const counter = new TokenCounter(text, { ...tablesNow(), pattern });
      counter.step(Number.POSITIVE_INFINITY);
      return counter.tokens;
    };
    const piece = (text: string) => count(text, '[\\s\\S]+');
    // Only letters are pre-tokens: digits and spaces between them are not counted.
    expect(count('12 hello 345 world 6', '[a-z]+')).toBe(piece('hello') + piece('world'));
    // `x*` matches empty before every other character: those are skipped, one at a time.
    expect(count('yyxxxyx', 'x*')).toBe(piece('xxx') + piece('x'));
    expect(count('no match at all', '\\d+')).toBe(0);
  });
});
