import { describe, expect, it } from 'vitest';
import { seededRandom } from './testing/demoMarket.js';
import {
  isSpace,
  looksLikeCodeMeasured,
  measureText,
  segmentsOf,
  styleOf,
} from './textMeasures.js';

/** The definitions the one-pass counts must equal: regular expressions and splits. */
const byExpression = {
  style(text: string) {
    const chars = Math.max(1, text.length);
    const share = (pattern: RegExp) =>
      Math.round(((text.match(pattern) ?? []).length / chars) * 100) / 100;
    const words = text.split(/\s+/).filter((word) => word.length > 0);
    const letters = words.reduce((sum, word) => sum + word.length, 0);
    return {
      punctuation: share(/[.,;:!?]/g),
      brackets: share(/[()[\]{}'"<>=*/\\`-]/g),
      capitals: share(/[A-Z]/g),
      digits: share(/[0-9]/g),
      wordLength: words.length === 0 ? 0 : Math.round((letters / words.length) * 10) / 10,
    };
  },
  code(text: string) {
    const lines = text.split('\n');
    if (lines.length < 3)
      return /[;{}]\s*$|^\s*(def|function|const|import|class|return)\b/m.test(text);
    let codeLike = 0;
    for (const line of lines) if (/[;{}()=<>[\]]|^\s{2,}\S/.test(line)) codeLike++;
    return codeLike / lines.length > 0.5;
  },
  segments(text: string) {
    const lineCount = (part: string) => (part.length === 0 ? 0 : part.split('\n').length);
    const segment = (part: string, fenced: boolean) => ({
      fenced,
      chars: part.length,
      lines: lineCount(part),
      questions: (part.match(/\?/g) ?? []).length,
    });
    const out: ReturnType<typeof segment>[] = [];
    let at = 0;
    for (const match of text.matchAll(/```[^\n]*\n[\s\S]*?```/g)) {
      if (match.index > at) out.push(segment(text.slice(at, match.index), false));
      out.push(segment(match[0], true));
      at = match.index + match[0].length;
    }
    if (at < text.length) out.push(segment(text.slice(at), false));
    if (out.length <= 16) return out;
    const rest = text.slice(out.slice(0, 15).reduce((sum, s) => sum + s.chars, 0));
    return [...out.slice(0, 15), segment(rest, false)];
  },
};

/** Pieces that exercise every class: JavaScript's whitespace (Unicode's too), code, fences. */
const PIECES = [
  ...' \t\n\r\v\f\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\u0085\u180e\u200b\u001c',
  ...'.,;:!?()[]{}\'"<>=*/\\`-_#@%^&|~+',
  'A',
  'Z',
  'a',
  'z',
  '0',
  '9',
  'é',
  '😀',
  '```',
  '```ts\n',
  '\n  ',
  '  x',
  'const ',
  'return',
  'def f():',
  'word ',
  'Question? ',
];

function randomText(next: () => number): string {
  const length = Math.floor(next() * 120);
  let text = '';
  for (let i = 0; i < length; i++) text += PIECES[Math.floor(next() * PIECES.length)];
  return text;
}

describe('text measures', () => {
  it('counts whitespace exactly as \\s matches it', () => {
    for (let c = 0; c < 0x10000; c++) {
      expect(isSpace(c), `U+${c.toString(16)}`).toBe(/\s/.test(String.fromCharCode(c)));
    }
  });

  it('equal the regular expressions on random text', () => {
    const next = seededRandom(7);
    for (let i = 0; i < 3_000; i++) {
      const text = randomText(next);
      const measures = measureText(text);
      expect(styleOf(text), JSON.stringify(text)).toEqual(byExpression.style(text));
      expect(looksLikeCodeMeasured(text, measures), JSON.stringify(text)).toBe(
        byExpression.code(text),
      );
      expect(segmentsOf(text, measures), JSON.stringify(text)).toEqual(byExpression.segments(text));
    }
  });

  it('equal them on the edge cases', () => {
    const many = Array.from({ length: 20 }, (_, i) => `text ${i}?\n\`\`\`js\nx = ${i};\n\`\`\``);
    for (const text of ['', '\n', '\n\n', '  ', ' \n  a\n\tb', '```\n```', many.join('\n')]) {
      const measures = measureText(text);
      expect(styleOf(text)).toEqual(byExpression.style(text));
      expect(looksLikeCodeMeasured(text, measures)).toBe(byExpression.code(text));
      expect(segmentsOf(text, measures)).toEqual(byExpression.segments(text));
    }
  });
});
