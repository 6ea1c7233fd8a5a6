/**
 * The demo model's sampled continuation (README "Demo model"): when a request sets `temperature`
 * or `seed`, a text answer ends with a dozen words drawn from a small language model whose
 * weights are the model's name. Temperature 0 (or a seed) gives the same words every time;
 * above 0 without a seed the words vary like a real model's sampled output. Two model names
 * give two different distributions, so a seller serving another model's answers can be caught
 * by the buyer's audits (docs/decisions/153-model-audits.md).
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

/** Words in a continuation. */
const LENGTH = 12;
/** Spread of the logits: higher makes the model surer of its favourite words. */
const SHARPNESS = 8;
/** Highest temperature honoured (vendors cap it at 2). */
const MAX_TEMPERATURE = 2;

export interface Sampling {
  temperature: number;
  seed: number | undefined;
}

/** The sampling a request asks for, or undefined when it sets neither temperature nor seed. */
export function samplingOf(body: Record<string, unknown>): Sampling | undefined {
  const { temperature, seed } = body;
  const hasTemperature = typeof temperature === 'number' && Number.isFinite(temperature);
  const hasSeed = typeof seed === 'number' && Number.isSafeInteger(seed);
  if (!hasTemperature && !hasSeed) return undefined;
  return {
    temperature: hasTemperature ? Math.min(Math.max(temperature, 0), MAX_TEMPERATURE) : 1,
    seed: hasSeed ? seed : undefined,
  };
}

/** One logit per vocabulary word: a hash of the weights, the prompt and the position. */
function logits(weights: string, prompt: string, position: number): number[] {
  const digest = createHash('sha256').update(`${weights}\u0000${prompt}\u0000${position}`).digest();
  return VOCABULARY.map((_, index) => (digest[index]! / 255) * SHARPNESS);
}

/** A seeded draw in [0, 1) for one position: the same seed and prompt give the same words. */
function seededDraw(seed: number, prompt: string, position: number): number {
  return (
    createHash('sha256')
      .update(`${seed}\u0000${prompt}\u0000${position}`)
      .digest()
      .readUInt32LE(0) /
    2 ** 32
  );
}

function pick(scores: number[], temperature: number, random: number): number {
  if (temperature === 0) return scores.indexOf(Math.max(...scores));
  const top = Math.max(...scores);
  const weights = scores.map((score) => Math.exp((score - top) / temperature));
  let draw = random * weights.reduce((sum, weight) => sum + weight, 0);
  for (let index = 0; index < weights.length; index++) {
    draw -= weights[index]!;
    if (draw <= 0) return index;
  }
  return weights.length - 1;
}

/** The continuation's words for `prompt` under the model `weights`. */
export function sampleWords(weights: string, prompt: string, sampling: Sampling): string[] {
  const { seed } = sampling;
  const words: string[] = [];
  for (let position = 0; position < LENGTH; position++) {
    const draw =
      seed === undefined ? randomInt(0, 2 ** 32) / 2 ** 32 : seededDraw(seed, prompt, position);
    words.push(VOCABULARY[pick(logits(weights, prompt, position), sampling.temperature, draw)]!);
  }
  return words;
}
