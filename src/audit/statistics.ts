/**
 * The numbers behind an audit verdict (docs/decisions/166-odd-one-out-test.md). Each probe is
 * one request sent to the audited seller and to other sellers of the model; when they serve the
 * same model, their answers are exchangeable draws from one distribution, so which of them is
 * "the audited one" is a fair draw. The statistic says how far each answer stands apart from
 * the others; its exact null distribution over a run of probes is the convolution of those
 * fair draws. Everything here is pure and deterministic: anyone holding the answers recomputes
 * the same p-value (`svc audit verify`).
 */

/** Tokens compared per answer: the opening of an answer is where models differ most. */
const MAX_TOKENS = 512;
/** Quantum of the statistic (1/512): the exact test works on these integers. */
export const QUANTUM = 512;

/** Words and punctuation of an answer, as the unit the comparisons count. */
export function tokensOf(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu)) {
    out.push(match[0]);
    if (out.length === MAX_TOKENS) break;
  }
  return out;
}

/** The part of an answer the comparison reads (its first MAX_TOKENS tokens), as evidence. */
export function comparableText(text: string): string {
  let count = 0;
  for (const match of text.matchAll(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu)) {
    if (++count === MAX_TOKENS) return text.slice(0, match.index + match[0].length);
  }
  return text;
}

/** An answer prepared for comparison: its tokens and its unigram + bigram counts. */
interface Prepared {
  tokens: string[];
  grams: Map<string, number>;
  norm: number;
}

function prepare(text: string): Prepared {
  const tokens = tokensOf(text);
  const grams = new Map<string, number>();
  for (let i = 0; i < tokens.length; i++) {
    grams.set(tokens[i]!, (grams.get(tokens[i]!) ?? 0) + 1);
    if (i + 1 < tokens.length) {
      const pair = `${tokens[i]}\u0000${tokens[i + 1]}`;
      grams.set(pair, (grams.get(pair) ?? 0) + 1);
    }
  }
  let squares = 0;
  for (const count of grams.values()) squares += count * count;
  return { tokens, grams, norm: Math.sqrt(squares) };
}

/**
 * How alike two answers are, in [0, 1]: the mean of token agreement at the same position (where
 * sampled continuations of one model line up) and the cosine of their word and word-pair counts
 * (their vocabulary, wherever it falls). Two empty answers are alike.
 */
function similarity(x: Prepared, y: Prepared): number {
  const longest = Math.max(x.tokens.length, y.tokens.length);
  if (longest === 0) return 1;
  let same = 0;
  const shortest = Math.min(x.tokens.length, y.tokens.length);
  for (let i = 0; i < shortest; i++) if (x.tokens[i] === y.tokens[i]) same++;
  let dot = 0;
  for (const [gram, count] of x.grams) dot += count * (y.grams.get(gram) ?? 0);
  const cosine = x.norm > 0 && y.norm > 0 ? dot / (x.norm * y.norm) : 0;
  return (same / longest + cosine) / 2;
}

/** Similarity of two answer texts (the kernel of the test). */
export function answerSimilarity(a: string, b: string): number {
  return similarity(prepare(a), prepare(b));
}

/**
 * How far each answer to one probe stands apart from the others: the mean similarity among the
 * others minus its mean similarity to them. Positive for an answer unlike the rest. Needs at
 * least three answers (with two, nobody can say which one is off).
 */
export function apartness(answers: readonly string[]): number[] {
  const n = answers.length;
  if (n < 3) throw new RangeError('apartness needs at least three answers');
  const prepared = answers.map(prepare);
  const k: number[][] = prepared.map(() => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const value = similarity(prepared[i]!, prepared[j]!);
      k[i]![j] = value;
      k[j]![i] = value;
    }
  }
  let total = 0;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) total += k[i]![j]!;
  return prepared.map((_, i) => {
    let own = 0;
    for (let j = 0; j < n; j++) if (j !== i) own += k[i]![j]!;
    const others = total - own;
    const otherPairs = ((n - 1) * (n - 2)) / 2;
    return others / otherPairs - own / (n - 1);
  });
}

/** One probe's apartness values (one per answering seller) and which one is the audited seller. */
export interface ProbeScores {
  /** Apartness quantised to integers (round(value × QUANTUM)). */
  scores: readonly number[];
  seller: number;
}

/** Quantises apartness values for the exact test. */
export function quantise(values: readonly number[]): number[] {
  return values.map((value) => Math.round(value * QUANTUM));
}

export interface OddOneOutResult {
  /** Sum over probes of the audited seller's quantised apartness. */
  statistic: number;
  /**
   * P(sum ≥ statistic) when, in each probe, the audited seller's place is a fair draw among the
   * sellers that answered it: exact for the quantised values.
   */
  pValue: number;
  probes: number;
  /** Probes in which the audited seller stood furthest apart (ties count for nobody). */
  oddOneOut: number;
}

/**
 * The exact odd-one-out test over a run of probes: the null distribution is the convolution of
 * each probe's uniform draw over its sellers' scores, computed on integers. Work is bounded by
 * probes × range of the sum × sellers per probe; callers bound the probes (VERDICT_WINDOW).
 */
export function oddOneOutTest(probes: readonly ProbeScores[]): OddOneOutResult {
  if (probes.length === 0) return { statistic: 0, pValue: 1, probes: 0, oddOneOut: 0 };
  let statistic = 0;
  let oddOneOut = 0;
  let span = 0;
  for (const probe of probes) {
    const own = probe.scores[probe.seller]!;
    statistic += own;
    if (probe.scores.every((score, index) => index === probe.seller || score < own)) oddOneOut++;
    span += Math.max(...probe.scores) - Math.min(...probe.scores);
  }
  // mass[i] = P(sum = offset + i); each probe adds its scores shifted by its own minimum.
  let mass = new Float64Array(span + 1);
  mass[0] = 1;
  let offset = 0;
  let reach = 0;
  for (const probe of probes) {
    const minimum = Math.min(...probe.scores);
    const next = new Float64Array(mass.length);
    const share = 1 / probe.scores.length;
    for (let at = 0; at <= reach; at++) {
      const here = mass[at]!;
      if (here === 0) continue;
      for (const score of probe.scores) next[at + score - minimum]! += here * share;
    }
    offset += minimum;
    reach += Math.max(...probe.scores) - minimum;
    mass = next;
  }
  let tail = 0;
  for (let at = Math.max(0, statistic - offset); at <= reach; at++) tail += mass[at]!;
  return { statistic, pValue: Math.min(1, tail), probes: probes.length, oddOneOut };
}
