/**
 * From probes to a verdict per (seller, model) (docs/decisions/166-odd-one-out-test.md): over
 * the seller's last VERDICT_WINDOW probes, the exact odd-one-out test asks how likely an honest
 * seller would stand as far apart from the others as this one did. `suspect` at p ≤ SUSPECT_P,
 * `failed` at p ≤ FAILED_P, `pass` otherwise.
 */
import { oddOneOutTest } from './statistics.js';

export type Verdict = 'pass' | 'suspect' | 'failed';

/** Probes a verdict looks back over. */
export const VERDICT_WINDOW = 24;
/** p-value at or below which a seller is `suspect`. */
export const SUSPECT_P = 1e-5;
/** p-value at or below which a seller is `failed`. */
export const FAILED_P = 1e-6;

/** The exact bytes a receipt covers (base64), kept so anyone can check it (decision 168). */
export interface ProbeEvidence {
  request: { method: string; path: string; body: string };
  response: { status: number; body: string };
  /** The API format the seller answered in. */
  sellerProtocol: string;
}

/** One seller's answer to a probe. */
export interface ProbeAnswer {
  peerId: string;
  serviceId: string;
  /** The answer's text as compared (its first 512 tokens: src/audit/statistics.ts). */
  text: string;
  costUsd: string;
  /** The seller's signed receipt of the exact request and answer, when the buyer checked one. */
  receipt?: Record<string, unknown>;
  /** The bytes the receipt covers, when they were small enough to keep. */
  evidence?: ProbeEvidence;
}

/** One probe: the same request answered by several sellers of one model. */
export interface ProbeRecord {
  id: string;
  /** When its last answer came (ms since the epoch). */
  at: number;
  modelKey: string;
  identity: string;
  /** The API format and path the probe was sent in. */
  format: string;
  answers: ProbeAnswer[];
  /** Apartness of each answer, quantised (src/audit/statistics.ts), in the order of `answers`. */
  scores: number[];
}

/** A seller's standing for one model: its verdict and the probes behind it. */
export interface SellerAudit {
  verdict: Verdict;
  /** Probes in the window. */
  audits: number;
  /** Probes in which this seller's answer stood furthest from the others'. */
  disagreements: number;
  /** The exact test's p-value over the window. */
  pValue: number;
  /** Sum of this seller's quantised apartness over the window. */
  statistic: number;
  /** The probes the verdict rests on, oldest first. */
  probes: ProbeRecord[];
}

/** The verdict of `peerId` over `history` (its probes, oldest first); undefined before any. */
export function verdictOf(
  peerId: string,
  history: readonly ProbeRecord[],
): SellerAudit | undefined {
  const probes = history.slice(-VERDICT_WINDOW);
  const scored = probes.flatMap((probe) => {
    const seller = probe.answers.findIndex((answer) => answer.peerId === peerId);
    return seller >= 0 && probe.scores.length >= 3 ? [{ scores: probe.scores, seller }] : [];
  });
  if (scored.length === 0) return undefined;
  const test = oddOneOutTest(scored);
  const verdict: Verdict =
    test.pValue <= FAILED_P ? 'failed' : test.pValue <= SUSPECT_P ? 'suspect' : 'pass';
  return {
    verdict,
    audits: test.probes,
    disagreements: test.oddOneOut,
    pValue: test.pValue,
    statistic: test.statistic,
    probes: [...probes],
  };
}
