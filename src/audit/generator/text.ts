/**
 * Writes the text of an audit request, slot by slot (src/audit/shape.ts): system prompts, user
 * questions and instructions, assistant replies, tool results and code, tool descriptions and
 * argument values, each in the length, lines, fenced code blocks and questions of the text that
 * stood there. One probe shares one theme (topic, language, names), so its turns read as one
 * conversation; within a text no sentence repeats.
 */
import type { TextSlot } from '../shape.js';
import { type Segment, styleOf } from '../textMeasures.js';
import { code, toolOutput } from './code.js';
import { capital, exactly, identifier, int, pick, type Random, type Theme } from './draw.js';
import {
  ACTIONS,
  ADJECTIVES,
  GOALS,
  NOUNS,
  PERSONAS,
  PROBLEMS,
  RULES,
  SHORT_REPLIES,
  SITUATIONS,
  VERBS,
} from './words.js';

type Write = (theme: Theme, random: Random) => string;
type Voice = 'system' | 'user' | 'assistant' | 'description';

/** Statements and questions in each voice; each call draws a new one. */
const STATEMENTS: Record<Voice, Write[]> = {
  system: [
    (t, r) => `You are ${pick(PERSONAS, r)}${r() < 0.5 ? ` working on ${t.project}` : ''}.`,
    (_, r) => `${pick(RULES, r)}.`,
    (_, r) => `When ${pick(SITUATIONS, r)}, ${pick(ACTIONS, r)}.`,
    (t, r) =>
      `The project is written in ${t.language}${r() < 0.5 ? ` and deployed ${pick(['weekly', 'daily', 'on every merge'], r)}` : ''}.`,
    (_, r) => `Prefer ${pick(ADJECTIVES, r)} answers over ${pick(ADJECTIVES, r)} ones.`,
    (_, r) => `Never ${pick(VERBS, r)} a ${pick(NOUNS, r)} without asking first.`,
    (t, r) => `The user's name is ${t.name}; ${pick(RULES, r).toLowerCase()}.`,
  ],
  user: [
    (_, r) =>
      `I'm trying to ${pick(VERBS, r)} the ${pick(NOUNS, r)} list, but ${pick(PROBLEMS, r)}.`,
    (t, r) => `Write a ${pick(ADJECTIVES, r)} version of ${t.topic} for ${t.name}.`,
    (t, r) => `Explain why ${t.topic} matters in ${int(r, 2, 6)} sentences.`,
    (t, r) => `Give me ${int(r, 2, 9)} ideas for ${t.topic}.`,
    (t, r) => `Please review ${t.topic}, ${pick(PROBLEMS, r)}.`,
    (t, r) =>
      `${capital(pick(VERBS, r))} the ${pick(NOUNS, r)}s for ${t.name} and keep it ${pick(ADJECTIVES, r)}.`,
    (_, r) => `It was fine ${int(r, 2, 30)} days ago.`,
    (t) => `We use ${t.language} for most of it.`,
  ],
  assistant: [
    (t, r) => `Sure, here is a ${pick(ADJECTIVES, r)} take on ${t.topic}.`,
    (_, r) => `The problem is most likely that ${pick(PROBLEMS, r)}.`,
    (t, r) => `I changed ${identifier(t, r)} so that ${pick(GOALS, r)}.`,
    (_, r) =>
      `First, ${pick(VERBS, r)} the ${pick(NOUNS, r)}; then ${pick(VERBS, r)} the ${pick(NOUNS, r)}.`,
    (t, _) => `This keeps ${t.topic} simple for ${t.name}.`,
    (_, r) => `There are ${int(r, 2, 7)} things to check before we go on.`,
    (_, r) => `Let me know if you want it more ${pick(ADJECTIVES, r)}.`,
    (_, r) => `When ${pick(SITUATIONS, r)}, ${pick(ACTIONS, r)}.`,
  ],
  description: [
    (_, r) => `${capital(pick(VERBS, r))}s a ${pick(NOUNS, r)} by its id.`,
    (t, r) =>
      `Use this tool to ${pick(VERBS, r)} ${pick(NOUNS, r)}s in the ${t.project} workspace.`,
    (_, r) => `Returns the ${pick(NOUNS, r)} as JSON.`,
    (_, r) => `The ${pick(NOUNS, r)} must exist; fails otherwise.`,
    (_, r) => `Optional. At most ${int(r, 10, 2000)} ${pick(NOUNS, r)}s.`,
    (_, r) => `When ${pick(SITUATIONS, r)}, ${pick(ACTIONS, r)}.`,
  ],
};

const QUESTIONS: Record<Voice, Write[]> = {
  system: [(_, r) => `Is the ${pick(NOUNS, r)} ready?`],
  user: [
    (t, _) => `Can you help me with ${t.topic}?`,
    (t, r) => `How would you change ${identifier(t, r)} so that ${pick(GOALS, r)}?`,
    (t, r) =>
      `What is the best way to ${pick(VERBS, r)} ${int(r, 2, 5000)} ${pick(NOUNS, r)}s in ${t.language}?`,
    (_, r) => `Is it a good idea to ${pick(VERBS, r)} every ${pick(NOUNS, r)} before saving?`,
    (t, r) => `what does ${identifier(t, r)} do?`,
    (_, r) => `why does it ${pick(VERBS, r)} the ${pick(NOUNS, r)} twice?`,
    (t, r) => `Any idea why ${pick(PROBLEMS, r)} in ${t.project}?`,
  ],
  assistant: [
    (_, r) => `Do you want me to ${pick(VERBS, r)} the ${pick(NOUNS, r)}s as well?`,
    (t, _) => `Should I keep ${t.topic} as it is?`,
  ],
  description: [(_, r) => `Which ${pick(NOUNS, r)} to ${pick(VERBS, r)}?`],
};

/** Prose in `voice`: `chars` long over `lines` lines, with `questions` questions, no repeats. */
function prose(voice: Voice, part: Segment, theme: Theme, random: Random): string {
  if (part.chars <= 18 && voice === 'user') {
    const fitting = SHORT_REPLIES.filter((reply) => reply.length <= Math.max(2, part.chars + 4));
    return pick(fitting.length > 0 ? fitting : SHORT_REPLIES, random);
  }
  const used = new Set<string>();
  const sentences: string[] = [];
  let size = 0;
  let questions = part.questions;
  for (let guard = 0; size < part.chars && guard < 20_000; guard++) {
    const asking = questions > 0 && (random() < 0.5 || size > part.chars * 0.6);
    const sentence = pick(asking ? QUESTIONS[voice] : STATEMENTS[voice], random)(theme, random);
    if (used.has(sentence) && guard % 8 !== 7) continue;
    used.add(sentence);
    if (asking) questions--;
    sentences.push(sentence);
    size += sentence.length + 1;
  }
  // Questions still owed replace the last statements (a short text may hold only questions).
  for (let at = sentences.length - 1; questions > 0 && at >= 0; at--) {
    if (sentences[at]!.endsWith('?')) continue;
    sentences[at] = pick(QUESTIONS[voice], random)(theme, random);
    questions--;
  }
  const wanted = Math.max(1, part.lines);
  const lines: string[] = [];
  const perLine = Math.ceil(sentences.length / wanted);
  for (let at = 0; at < sentences.length; at += perLine) {
    lines.push(sentences.slice(at, at + perLine).join(' '));
  }
  return exactly(lines.join('\n'), part.chars, random);
}

/** A short value for a tool-call argument: a path, a command, a query or a word. */
function value(slot: TextSlot, theme: Theme, random: Random): string {
  if (slot.chars > 60 || slot.lines > 1) {
    return slot.code
      ? code(slot.chars, slot.lines, theme, random)
      : prose('user', whole(slot), theme, random);
  }
  const forms = [
    () => `/home/${theme.name.toLowerCase()}/${theme.project}/src/${identifier(theme, random)}.ts`,
    () => `${theme.project}/${pick(NOUNS, random)}s`,
    () => `npm test -- ${identifier(theme, random)}`,
    () => `${pick(VERBS, random)} ${pick(NOUNS, random)}s`,
    () => identifier(theme, random),
    () => `git diff ${pick(NOUNS, random)}s/`,
  ];
  const written = pick(forms, random)();
  return written.length >= slot.chars
    ? written.slice(0, slot.chars)
    : exactly(written, slot.chars, random);
}

const whole = (slot: TextSlot): Segment => ({
  fenced: false,
  chars: slot.chars,
  lines: slot.lines,
  questions: 0,
});

/** Candidates written per slot; the one whose style is nearest the original's is kept. */
const CANDIDATES = 8;
/** Longer texts get fewer candidates: their style varies less, and writing costs more. */
const LONG_TEXT_CHARS = 1_500;

/**
 * The text for one slot of a probe: several candidates, and the one whose punctuation, capitals,
 * digits and word length come nearest the original text's (shallow statistics a seller could
 * count).
 */
export function writeSlot(slot: TextSlot, theme: Theme, random: Random): string {
  const target = slot.style;
  if (!target) return writeOne(slot, theme, random);
  let best = '';
  let bestDistance = Number.POSITIVE_INFINITY;
  const candidates = slot.chars > LONG_TEXT_CHARS ? 2 : CANDIDATES;
  for (let i = 0; i < candidates; i++) {
    const candidate = writeOne(slot, theme, random);
    const style = styleOf(candidate);
    const distance =
      Math.abs(style.punctuation - target.punctuation) +
      Math.abs(style.brackets - target.brackets) +
      Math.abs(style.capitals - target.capitals) +
      Math.abs(style.digits - target.digits) +
      Math.abs(style.wordLength - target.wordLength) / 20;
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function writeOne(slot: TextSlot, theme: Theme, random: Random): string {
  if (slot.chars === 0) return '';
  if (slot.voice === 'value') return value(slot, theme, random);
  if (slot.voice === 'description') return prose('description', whole(slot), theme, random);
  if (slot.voice === 'tool') {
    return slot.code
      ? code(slot.chars, slot.lines, theme, random, true)
      : toolOutput(slot.chars, theme, random);
  }
  const voice: Voice =
    slot.voice === 'system' ? 'system' : slot.voice === 'assistant' ? 'assistant' : 'user';
  if (slot.code && !slot.segments.some((part) => part.fenced)) {
    return code(slot.chars, slot.lines, theme, random);
  }
  const parts = slot.segments.length > 0 ? slot.segments : [whole(slot)];
  // Stretches joined by blank lines, as the originals were (their lengths hold the newlines).
  return parts
    .map((part, index) => {
      const size = Math.max(1, part.chars - (index < parts.length - 1 ? 2 : 0));
      if (!part.fenced) return prose(voice, { ...part, chars: size }, theme, random);
      const body = code(Math.max(1, size - 8), Math.max(1, part.lines - 2), theme, random);
      return `\`\`\`\n${body}\n\`\`\``;
    })
    .join('\n\n');
}
