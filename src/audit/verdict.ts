/**
 * From audit answers to a verdict per (seller, model) (docs/decisions/153-model-audits.md):
 * each audit agrees, disagrees or is inconclusive; over a seller's recent audits, no
 * disagreement is `pass`, one is `suspect`, two or more are `failed`.
 */
import {
  agreement,
  type PromptSamples,
  type TwoSampleResult,
  twoSampleTest,
} from './statistics.js';

export type Verdict = 'pass' | 'suspect' | 'failed';
export type AuditKind = 'spot' | 'sampled';
export type AuditOutcome = 'agree' | 'disagree' | 'inconclusive';

/** What one audit found, kept as evidence. */
export interface AuditEvidence {
  kind: AuditKind;
  /** When the audit ended (ms since the epoch). */
  at: number;
  outcome: AuditOutcome;
  prompts: string[];
  /** The audited seller's answers (the first per prompt, shortened). */
  answers: string[];
  /** The other sellers' answers (the first per prompt, shortened). */
  references: string[];
  referencePeers: string[];
  /** Spot: token-level similarity to the other sellers' answer; sampled: MMD² (Hamming). */
  statistic: number;
  /** Spot: shared prefix share; sampled: null. */
  prefix: number | null;
  /** Sampled: the permutation p-value (of the confirming test when there was one). */
  pValue: number | null;
  costUsd: string;
}

/** Answers at temperature 0 count as the same at or above this token-level similarity. */
export const SAME_ANSWER = 0.9;
/** A two-sample test rejects at or below this p-value (then a fresh sample must confirm it). */
export const REJECT_P = 0.005;
/** Audits a verdict looks back over. */
export const VERDICT_WINDOW = 20;

export interface SpotJudgement {
  outcome: AuditOutcome;
  similarity: number;
  prefix: number;
  exact: boolean;
}

/**
 * A temperature-0 answer against other sellers' answers to the same request: inconclusive
 * unless at least two references agree with each other (with one reference there is no telling
 * which side is wrong); otherwise the audited answer agrees or disagrees with theirs.
 */
export function judgeSpot(answer: string, references: string[]): SpotJudgement {
  const [first, ...rest] = references;
  if (first === undefined)
    return { outcome: 'inconclusive', similarity: 0, prefix: 0, exact: false };
  const against = agreement(answer, first);
  const consensus =
    rest.length > 0 && rest.every((other) => agreement(first, other).similarity >= SAME_ANSWER);
  const outcome = !consensus
    ? 'inconclusive'
    : against.similarity >= SAME_ANSWER
      ? 'agree'
      : 'disagree';
  return { outcome, similarity: against.similarity, prefix: against.prefix, exact: against.exact };
}

/** Sampled answers per prompt, per seller (index 0 is the audited seller). */
export type SellerSamples = string[][];

/** Each seller's samples against the rest's, prompt by prompt. */
function leaveOneOut(sellers: SellerSamples[], index: number, seed: number): TwoSampleResult {
  const prompts: PromptSamples[] = sellers[index]!.map((own, prompt) => ({
    seller: own,
    pool: sellers.flatMap((other, at) => (at === index ? [] : other[prompt]!)),
  }));
  return twoSampleTest(prompts, seed);
}

export interface SampledJudgement {
  /** 'disagree' only after `confirm` agrees; 'needs-confirmation' asks for a fresh sample. */
  outcome: AuditOutcome | 'needs-confirmation';
  test: TwoSampleResult;
}

/**
 * The audited seller (index 0) against the pool of the others: it is rejected when its test
 * says different (p ≤ REJECT_P) and it is the most different seller of the audit, so an honest
 * seller compared with a pool holding a substitute is not the one blamed.
 */
export function judgeSampled(sellers: SellerSamples[], seed: number): SampledJudgement {
  if (sellers.length < 3) return { outcome: 'inconclusive', test: { statistic: 0, pValue: 1 } };
  const own = leaveOneOut(sellers, 0, seed);
  if (own.pValue > REJECT_P) return { outcome: 'agree', test: own };
  for (let index = 1; index < sellers.length; index++) {
    if (leaveOneOut(sellers, index, seed).statistic > own.statistic) {
      return { outcome: 'inconclusive', test: own };
    }
  }
  return { outcome: 'needs-confirmation', test: own };
}

/** A seller's standing for one model: its verdict and the audits behind it. */
export interface SellerAudit {
  verdict: Verdict;
  audits: number;
  disagreements: number;
  /** The most telling audit: the last disagreement, else the last audit. */
  evidence: AuditEvidence;
}

/** The verdict over the recent audits; undefined before any conclusive audit. */
export function verdictOf(history: readonly AuditEvidence[]): SellerAudit | undefined {
  const recent = history.slice(-VERDICT_WINDOW);
  const conclusive = recent.filter((audit) => audit.outcome !== 'inconclusive');
  if (conclusive.length === 0) return undefined;
  const against = recent.filter((audit) => audit.outcome === 'disagree');
  const verdict: Verdict =
    against.length === 0 ? 'pass' : against.length === 1 ? 'suspect' : 'failed';
  return {
    verdict,
    audits: conclusive.length,
    disagreements: against.length,
    evidence: against.at(-1) ?? recent.at(-1)!,
  };
}
