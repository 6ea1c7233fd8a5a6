/**
 * The numbers behind an audit verdict (docs/decisions/153-model-audits.md): how alike two
 * deterministic answers are, and a two-sample test (MMD with a Hamming kernel, permutation
 * p-value) over sampled answers, as in "Model Equality Testing" (Gao, Liang and Guestrin, 2025).
 */

/** Tokens compared: at most this many per answer (answers are short canaries). */
const MAX_TOKENS = 256;

/** Words and punctuation of an answer, as the unit the comparisons count. */
export function tokensOf(text: string): string[] {
  return (text.match(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu) ?? []).slice(0, MAX_TOKENS);
}

export interface Agreement {
  exact: boolean;
  /** Shared leading tokens over the longer answer's length (1 when both are empty). */
  prefix: number;
  /** Tokens equal at the same position over the longer answer's length. */
  similarity: number;
}

/** How far two deterministic answers agree. */
export function agreement(a: string, b: string): Agreement {
  const x = tokensOf(a);
  const y = tokensOf(b);
  const longest = Math.max(x.length, y.length);
  if (longest === 0) return { exact: a === b, prefix: 1, similarity: 1 };
  let prefix = 0;
  while (prefix < Math.min(x.length, y.length) && x[prefix] === y[prefix]) prefix++;
  let same = 0;
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] === y[i]) same++;
  return { exact: a === b, prefix: prefix / longest, similarity: same / longest };
}

/** The Hamming kernel: positions where two token sequences agree, over the longer length. */
function hamming(x: string[], y: string[]): number {
  const longest = Math.max(x.length, y.length);
  if (longest === 0) return 1;
  let same = 0;
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] === y[i]) same++;
  return same / longest;
}

/** Samples of one prompt: the audited seller's answers and the other sellers' answers. */
export interface PromptSamples {
  seller: string[];
  pool: string[];
}

/** Unbiased MMD² of two groups, from a precomputed kernel matrix and a group assignment. */
function mmd2(kernel: number[][], inFirst: boolean[]): number {
  let xx = 0;
  let yy = 0;
  let xy = 0;
  let nx = 0;
  let ny = 0;
  for (const flag of inFirst) if (flag) nx++;
  ny = inFirst.length - nx;
  for (let i = 0; i < kernel.length; i++) {
    for (let j = 0; j < kernel.length; j++) {
      if (i === j) continue;
      const k = kernel[i]![j]!;
      if (inFirst[i] && inFirst[j]) xx += k;
      else if (!inFirst[i] && !inFirst[j]) yy += k;
      else xy += k;
    }
  }
  return xx / (nx * (nx - 1)) + yy / (ny * (ny - 1)) - xy / (nx * ny);
}

/** A small deterministic generator (mulberry32), so a verdict is reproducible from its evidence. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function shuffle(flags: boolean[], random: () => number): boolean[] {
  const out = [...flags];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export interface TwoSampleResult {
  /** Sum over prompts of the unbiased MMD² (Hamming kernel). */
  statistic: number;
  /** Permutation p-value: (1 + permutations at least as extreme) / (1 + permutations). */
  pValue: number;
}

/** Permutations of the test (p-values down to about 1 / 400). */
const PERMUTATIONS = 399;

/**
 * Tests whether the seller's samples come from the same distribution as the pool's: the
 * statistic is summed over prompts, and each permutation reshuffles seller and pool labels
 * within every prompt. Prompts with fewer than two samples on a side are skipped.
 */
export function twoSampleTest(prompts: PromptSamples[], seed = 1): TwoSampleResult {
  const usable = prompts.filter((p) => p.seller.length >= 2 && p.pool.length >= 2);
  if (usable.length === 0) return { statistic: 0, pValue: 1 };
  const groups = usable.map((p) => {
    const tokens = [...p.seller, ...p.pool].map(tokensOf);
    const kernel = tokens.map((x) => tokens.map((y) => hamming(x, y)));
    const labels = tokens.map((_, index) => index < p.seller.length);
    return { kernel, labels };
  });
  const statisticOf = (labelSets: boolean[][]) =>
    groups.reduce((sum, group, index) => sum + mmd2(group.kernel, labelSets[index]!), 0);
  const observed = statisticOf(groups.map((group) => group.labels));
  const random = seededRandom(seed);
  let extreme = 0;
  for (let round = 0; round < PERMUTATIONS; round++) {
    const permuted = groups.map((group) => shuffle(group.labels, random));
    if (statisticOf(permuted) >= observed - 1e-12) extreme++;
  }
  return { statistic: observed, pValue: (1 + extreme) / (1 + PERMUTATIONS) };
}
