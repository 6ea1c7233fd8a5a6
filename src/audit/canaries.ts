/**
 * The built-in canary prompts audits send (docs/decisions/153-model-audits.md). Built from
 * templates and fill-ins, so a seller cannot keep a short list of them to answer honestly
 * while serving everything else from a cheaper model. Users' own prompts are never re-sent
 * to other sellers.
 */
import { randomInt } from 'node:crypto';

const TEMPLATES = [
  'In one sentence, what is {x}?',
  'Name three facts about {x}.',
  'Write a short line of verse about {x}.',
  'Explain {x} to a ten-year-old in two sentences.',
  'Give one surprising use of {x}.',
  'Describe {x} using exactly five words.',
] as const;

const SUBJECTS = [
  'a lighthouse',
  'photosynthesis',
  'the number seven',
  'a river delta',
  'binary search',
  'volcanic glass',
  'a paper map',
  'tidal power',
  'the colour teal',
  'a sourdough starter',
  'magnetism',
  'an old clock tower',
  'compound interest',
  'a mountain hut',
  'the speed of sound',
  'beeswax',
] as const;

/** Number of distinct canary prompts. */
const CANARY_COUNT = TEMPLATES.length * SUBJECTS.length;

/** The i-th canary prompt (wraps around). */
function canaryPrompt(index: number): string {
  const i = ((index % CANARY_COUNT) + CANARY_COUNT) % CANARY_COUNT;
  const template = TEMPLATES[i % TEMPLATES.length]!;
  return template.replace('{x}', SUBJECTS[Math.floor(i / TEMPLATES.length)]!);
}

/** `count` different canary prompts picked at random. */
export function pickCanaries(
  count: number,
  random: (limit: number) => number = randomInt,
): string[] {
  const picked = new Set<number>();
  while (picked.size < Math.min(count, CANARY_COUNT)) picked.add(random(CANARY_COUNT));
  return [...picked].map(canaryPrompt);
}
