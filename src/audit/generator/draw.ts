/** Drawing words for audit texts: a probe's theme, identifiers, and texts cut to an exact length. */
import { LANGUAGES, NOUNS, SYLLABLES, TOPICS, VERBS } from './words.js';

export type Random = () => number;

/** What the texts of one probe share. */
export interface Theme {
  topic: string;
  language: string;
  noun: string;
  verb: string;
  name: string;
  project: string;
}

export function pick<T>(items: readonly T[], random: Random): T {
  return items[Math.floor(random() * items.length)]!;
}

export function int(random: Random, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

/** An invented word of two or three syllables. */
export function invented(random: Random): string {
  let word = '';
  const count = int(random, 2, 3);
  for (let i = 0; i < count; i++) word += pick(SYLLABLES, random);
  return word;
}

export const capital = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

/** A fresh theme for one probe. */
export function newTheme(random: Random): Theme {
  return {
    topic: pick(TOPICS, random),
    language: pick(LANGUAGES, random),
    noun: pick(NOUNS, random),
    verb: pick(VERBS, random),
    name: capital(invented(random)),
    project: invented(random),
  };
}

export function identifier(theme: Theme, random: Random): string {
  const verb = random() < 0.5 ? theme.verb : pick(VERBS, random);
  const noun = random() < 0.5 ? theme.noun : pick(NOUNS, random);
  if (theme.language === 'Python' || theme.language === 'Rust' || theme.language === 'Ruby') {
    return `${verb}_${noun}${random() < 0.3 ? `_${pick(NOUNS, random)}` : ''}`;
  }
  return `${verb}${capital(noun)}${random() < 0.3 ? capital(pick(NOUNS, random)) : ''}`;
}

/** Common words by length (1 to 9 letters), to finish a text at exactly its length. */
const FILLERS = [
  ['a', 'I'],
  ['so', 'it', 'to', 'we'],
  ['now', 'too', 'the', 'and'],
  ['then', 'also', 'here', 'that'],
  ['again', 'there', 'first', 'later'],
  ['please', 'thanks', 'before', 'anyway'],
  ['instead', 'exactly', 'finally', 'already'],
  ['probably', 'tomorrow', 'together', 'whatever'],
  ['carefully', 'therefore', 'somewhere', 'sometimes'],
] as const;

/** Words of `n` characters in all (spaces included), ending without a space. */
function fillerOf(n: number, random: Random): string {
  const words: string[] = [];
  let left = n;
  while (left > 0) {
    // A word of at most 9 letters, leaving room for a space and at least one more letter.
    const size = left <= 9 ? left : Math.min(9, left - 2);
    words.push(pick(FILLERS[size - 1]!, random));
    left -= size + 1;
  }
  return words.join(' ');
}

/**
 * `text` at exactly `chars` characters: cut at the last word boundary that fits, then finished
 * with common words and the punctuation it ends with (a length a seller could compare with the
 * buyer's other requests must not come out a few characters short).
 */
export function exactly(text: string, chars: number, random: Random, comment = ''): string {
  if (chars <= 0) return '';
  if (text.length === chars) return text;
  let cut = text.length > chars ? text.slice(0, chars) : text;
  if (text.length > chars) {
    const space = cut.search(/\s\S*$/);
    cut = space > 0 ? cut.slice(0, space) : cut;
  }
  const end = comment ? '' : '.';
  const room = chars - cut.length - (cut.length > 0 ? 1 : 0) - comment.length - end.length;
  if (room < 1) return `${cut}${' '.repeat(chars - cut.length)}`.slice(0, chars);
  const joint = cut.length > 0 ? (comment ? '\n' : ' ') : '';
  return `${cut}${joint}${comment}${fillerOf(room, random)}${end}`;
}
