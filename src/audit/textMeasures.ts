/**
 * What a request's shape keeps of a piece of text (src/audit/shape.ts): its lines, questions,
 * style and whether it reads as code, each counted in one pass over the characters. The buyer
 * shapes some of its own requests after they are answered; counting these with a regular
 * expression and a split per measure cost 54–120 µs for a 0.5–4 KB prompt
 * (docs/decisions/201-buyer-and-gateway-cpu-per-request.md). The counts are the regular
 * expressions' exactly: `\s` is JavaScript's whitespace (src/audit/textMeasures.test.ts checks
 * each against its expression on random text).
 */

/** Shares of a text's characters that are punctuation, brackets and quotes, capitals and digits (to 1/100), and its mean word length (to 1/10). */
export interface Style {
  punctuation: number;
  brackets: number;
  capitals: number;
  digits: number;
  wordLength: number;
}

/** A stretch of a text: prose, or a fenced code block; its length, lines and questions. */
export interface Segment {
  fenced: boolean;
  chars: number;
  lines: number;
  questions: number;
}

/** Character classes of ASCII, as bits: a character with none of them is part of a word and nothing else. */
const PUNCTUATION = 1;
const BRACKET = 2;
const CAPITAL = 4;
const DIGIT = 8;
/** `[;{}()=<>[\]]`: a line with one of these reads as code. */
const CODE = 16;
const SPACE = 32;
const NEWLINE_BIT = 64;
const QUESTION_BIT = 128;
const CLASSES = new Uint8Array(128);
for (const c of '.,;:!?') CLASSES[c.charCodeAt(0)]! |= PUNCTUATION;
for (const c of '()[]{}\'"<>=*/\\`-') CLASSES[c.charCodeAt(0)]! |= BRACKET;
for (let c = 65; c <= 90; c++) CLASSES[c]! |= CAPITAL;
for (let c = 48; c <= 57; c++) CLASSES[c]! |= DIGIT;
for (const c of ';{}()=<>[]') CLASSES[c.charCodeAt(0)]! |= CODE;
for (const c of ' \t\n\v\f\r') CLASSES[c.charCodeAt(0)]! |= SPACE;
CLASSES[10]! |= NEWLINE_BIT;
CLASSES[63]! |= QUESTION_BIT;

const NEWLINE = 10;
const QUESTION = 63;

/** True for a character JavaScript's `\s` matches. */
export function isSpace(c: number): boolean {
  if (c > 32 && c < 0xa0) return false;
  return (
    c === 32 ||
    (c >= 9 && c <= 13) ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Everything a text slot keeps, counted at once. */
export interface TextMeasures {
  /** `split('\n').length` (0 for an empty text). */
  lines: number;
  /** Count of `?`. */
  questions: number;
  punctuation: number;
  brackets: number;
  capitals: number;
  digits: number;
  /** Runs of non-whitespace characters, and the characters in them. */
  words: number;
  letters: number;
  /** Lines matching `/[;{}()=<>[\]]|^\s{2,}\S/`. */
  codeLines: number;
}

/** The measures of `text`. */
export function measureText(text: string): TextMeasures {
  let questions = 0;
  let punctuation = 0;
  let brackets = 0;
  let capitals = 0;
  let digits = 0;
  let words = 0;
  let letters = 0;
  let newlines = 0;
  let codeLines = 0;
  let inWord = false;
  // The current line: code characters seen, leading whitespace so far, its first other character seen.
  let lineCode = false;
  let lead = 0;
  let started = false;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    const kind = c < 128 ? CLASSES[c]! : isSpace(c) ? SPACE : 0;
    if ((kind & SPACE) === 0) {
      letters++;
      if (!inWord) {
        words++;
        inWord = true;
      }
      if (!started) {
        started = true;
        if (lead >= 2) lineCode = true;
      }
      if (kind === 0) continue;
      if (kind & PUNCTUATION) punctuation++;
      if (kind & BRACKET) brackets++;
      if (kind & CAPITAL) capitals++;
      if (kind & DIGIT) digits++;
      if (kind & CODE) lineCode = true;
      if (kind & QUESTION_BIT) questions++;
      continue;
    }
    inWord = false;
    if (kind & NEWLINE_BIT) {
      if (lineCode) codeLines++;
      newlines++;
      lineCode = false;
      lead = 0;
      started = false;
    } else if (!started) lead++;
  }
  if (lineCode) codeLines++;
  return {
    lines: length === 0 ? 0 : newlines + 1,
    questions,
    punctuation,
    brackets,
    capitals,
    digits,
    words,
    letters,
    codeLines,
  };
}

/** The style of measured text, rounded so it says nothing but how the text looks. */
export function styleOfMeasures(measures: TextMeasures, length: number): Style {
  const chars = Math.max(1, length);
  const share = (count: number) => Math.round((count / chars) * 100) / 100;
  return {
    punctuation: share(measures.punctuation),
    brackets: share(measures.brackets),
    capitals: share(measures.capitals),
    digits: share(measures.digits),
    wordLength:
      measures.words === 0 ? 0 : Math.round((measures.letters / measures.words) * 10) / 10,
  };
}

/** The style of a text, rounded so it says nothing but how the text looks. */
export function styleOf(text: string): Style {
  return styleOfMeasures(measureText(text), text.length);
}

const SHORT_CODE = /[;{}]\s*$|^\s*(def|function|const|import|class|return)\b/m;

/** True when measured text reads as code: most of its lines look like code (short text: a telltale line). */
export function looksLikeCodeMeasured(text: string, measures: TextMeasures): boolean {
  // `split('\n')` of an empty text has one line.
  const lines = Math.max(1, measures.lines);
  if (lines < 3) return SHORT_CODE.test(text);
  return measures.codeLines / lines > 0.5;
}

/** Lines (`split('\n').length`, 0 when empty) and questions of `text` from `from` to `to`. */
function countRange(text: string, from: number, to: number): { lines: number; questions: number } {
  let newlines = 0;
  let questions = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === NEWLINE) newlines++;
    else if (c === QUESTION) questions++;
  }
  return { lines: to === from ? 0 : newlines + 1, questions };
}

function segment(text: string, from: number, to: number, fenced: boolean): Segment {
  return { fenced, chars: to - from, ...countRange(text, from, to) };
}

/** Most stretches a text keeps apart (the rest join the last). */
const MAX_SEGMENTS = 16;
const FENCED = /```[^\n]*\n[\s\S]*?```/g;

/** Prose and fenced code blocks of a text, in order (only what is needed to write it anew). */
export function segmentsOf(text: string, measures: TextMeasures): Segment[] {
  if (!text.includes('```')) {
    return text.length === 0
      ? []
      : [
          {
            fenced: false,
            chars: text.length,
            lines: measures.lines,
            questions: measures.questions,
          },
        ];
  }
  const out: Segment[] = [];
  let at = 0;
  for (const match of text.matchAll(FENCED)) {
    if (match.index > at) out.push(segment(text, at, match.index, false));
    const end = match.index + match[0].length;
    out.push(segment(text, match.index, end, true));
    at = end;
  }
  if (at < text.length) out.push(segment(text, at, text.length, false));
  if (out.length <= MAX_SEGMENTS) return out;
  const kept = out.slice(0, MAX_SEGMENTS - 1);
  const restFrom = kept.reduce((sum, s) => sum + s.chars, 0);
  return [...kept, segment(text, restFrom, text.length, false)];
}
