/**
 * The demo model's sampled words (docs/guide/selling.md "Demo model"): every text answer opens with a phrase
 * drawn from a small language model whose weights are the model's name. Like the vendors'
 * models, it samples at temperature 1 unless the request says otherwise, honours `top_p`, and is
 * repeatable only at temperature 0 or with a `seed`. Two model names give two different
 * distributions, so a seller serving another model's answers can be caught by the buyer's audits
 * (docs/decisions/164-audits-a-seller-cannot-tell-from-traffic.md). Tests may pass their own
 * source of draws, so a sampled answer is reproducible without a `seed` in the request.
 */
import { createHash, randomInt } from 'node:crypto';

const VOCABULARY = [
  'amber',
  'basalt',
  'cedar',
  'delta',
  'ember',
  'fjord',
  'granite',
  'harbor',
  'iris',
  'juniper',
  'kelp',
  'lagoon',
  'meadow',
  'nectar',
  'opal',
  'pine',
  'quartz',
  'river',
  'sage',
  'tundra',
  'umber',
  'valley',
  'willow',
  'xenon',
  'yarrow',
  'zephyr',
  'aspen',
  'birch',
  'coral',
  'dune',
  'elm',
  'fern',
] as const;

/** Words in a sampled phrase. */
const LENGTH = 16;
/** Spread of the logits: high enough that a model prefers a few words at each step, as LLMs do. */
const SHARPNESS = 16;
/** Highest temperature honoured (vendors cap it at 2). */
const MAX_TEMPERATURE = 2;
/** The vendors' default temperature, used when a request sets none. */
const DEFAULT_TEMPERATURE = 1;
/** Longest context the logits read (the rest of a long prompt changes nothing). */
const MAX_CONTEXT_CHARS = 2_000;

export interface Sampling {
  temperature: number;
  /** Nucleus sampling: the smallest set of words holding this much probability. */
  topP: number;
  seed: number | undefined;
}

const finite = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);

/** The sampling a request asks for; the vendors' defaults (temperature 1, top_p 1) otherwise. */
export function samplingOf(body: Record<string, unknown>): Sampling {
  const { temperature, top_p: topP, seed } = body;
  return {
    temperature: finite(temperature)
      ? Math.min(Math.max(temperature, 0), MAX_TEMPERATURE)
      : DEFAULT_TEMPERATURE,
    topP: finite(topP) && topP > 0 && topP < 1 ? topP : 1,
    seed: typeof seed === 'number' && Number.isSafeInteger(seed) ? seed : undefined,
  };
}

/** One logit per word: a hash of the weights, the context and the position. */
function logits(weights: string, context: string, position: number): number[] {
  const digest = createHash('sha256')
    .update(`${weights}\u0000${context}\u0000${position}`)
    .digest();
  return VOCABULARY.map((_, index) => (digest[index]! / 255) * SHARPNESS);
}

/** A seeded draw in [0, 1) for one position: the same seed and context give the same words. */
function seededDraw(seed: number, context: string, position: number): number {
  return (
    createHash('sha256')
      .update(`${seed}\u0000${context}\u0000${position}`)
      .digest()
      .readUInt32LE(0) /
    2 ** 32
  );
}

function pick(scores: number[], sampling: Sampling, random: number): number {
  if (sampling.temperature === 0) return scores.indexOf(Math.max(...scores));
  const top = Math.max(...scores);
  const weights = scores.map((score) => Math.exp((score - top) / sampling.temperature));
  const order = weights.map((_, index) => index).sort((a, b) => weights[b]! - weights[a]!);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  // The nucleus: the most likely words until they hold top_p of the mass.
  const nucleus: number[] = [];
  let held = 0;
  for (const index of order) {
    nucleus.push(index);
    held += weights[index]!;
    if (held >= sampling.topP * total) break;
  }
  let draw = random * held;
  for (const index of nucleus) {
    draw -= weights[index]!;
    if (draw <= 0) return index;
  }
  return nucleus.at(-1)!;
}

/** A draw in [0, 1) from the system's random source. */
const systemDraw = () => randomInt(0, 2 ** 32) / 2 ** 32;

/**
 * The sampled words for `context` under the model `weights`. Draws come from the request's
 * `seed` when it has one, else from `random` (the system's random source by default).
 */
export function sampleWords(
  weights: string,
  context: string,
  sampling: Sampling,
  random: () => number = systemDraw,
): string[] {
  const { seed } = sampling;
  const bounded = context.slice(0, MAX_CONTEXT_CHARS);
  const words: string[] = [];
  for (let position = 0; position < LENGTH; position++) {
    const draw = seed === undefined ? random() : seededDraw(seed, bounded, position);
    words.push(VOCABULARY[pick(logits(weights, bounded, position), sampling, draw)]!);
  }
  return words;
}
