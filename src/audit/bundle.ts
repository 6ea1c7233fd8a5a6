/**
 * Audit bundles (docs/guide/trust.md): a seller's verdict with the probes it rests on,
 * each answer with the seller's signed receipt and the exact bytes it covers, written by
 * `svc audit export` and checked on any machine by `svc audit verify`: every signature, every
 * hash, every answer's text from its bytes, every apartness, and the p-value, recomputed from
 * nothing but the bundle.
 */
import { z } from 'zod';
import { formatOfProtocol } from '../formats/index.js';
import { type ApiProtocol, verifyReceipt } from '../network/index.js';
import { answerText, looksLikeStream } from './answerText.js';
import { apartness, comparableText, quantise } from './statistics.js';
import type { ProbeAnswer, ProbeRecord, SellerAudit } from './verdict.js';
import { verdictOf } from './verdict.js';

export const BUNDLE_KIND = 'svc-audit-bundle';

/** Largest bundle `svc audit verify` reads. */
export const MAX_BUNDLE_BYTES = 256 * 1024 * 1024;

const text = z.string().max(1_000_000);
const base64 = z
  .string()
  .max(16 * 1024 * 1024)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/);
const evidenceSchema = z.strictObject({
  request: z.strictObject({ method: z.string().max(16), path: z.string().max(4096), body: base64 }),
  response: z.strictObject({ status: z.number().int().min(100).max(599), body: base64 }),
  sellerProtocol: z.string().max(64),
});
const answerSchema = z.strictObject({
  peerId: z.string().max(64),
  serviceId: z.string().max(256),
  text,
  costUsd: z.string().max(32),
  receipt: z.record(z.string(), z.unknown()).optional(),
  evidence: evidenceSchema.optional(),
});
const probeSchema = z.strictObject({
  id: z.string().max(64),
  at: z.number(),
  modelKey: z.string().max(512),
  identity: z.string().max(256),
  format: z.string().max(32),
  answers: z.array(answerSchema).min(3).max(8),
  scores: z.array(z.number().int()).max(8),
});
const bundleSchema = z.strictObject({
  kind: z.literal(BUNDLE_KIND),
  version: z.literal(1),
  peerId: z.string().max(64),
  modelKey: z.string().max(512),
  exportedAt: z.number(),
  verdict: z.strictObject({
    verdict: z.enum(['pass', 'suspect', 'failed']),
    pValue: z.number(),
    statistic: z.number(),
    audits: z.number().int(),
    disagreements: z.number().int(),
  }),
  probes: z.array(probeSchema).max(64),
});

export type AuditBundle = z.infer<typeof bundleSchema>;

/** The bundle of one seller's standing for one model. */
export function bundleOf(peerId: string, standing: SellerAudit, exportedAt: number): AuditBundle {
  const { verdict, pValue, statistic, audits, disagreements, probes } = standing;
  return {
    kind: BUNDLE_KIND,
    version: 1,
    peerId,
    modelKey: probes.at(-1)?.modelKey ?? '',
    exportedAt,
    verdict: { verdict, pValue, statistic, audits, disagreements },
    probes: probes as AuditBundle['probes'],
  };
}

/** Why one answer of a bundle does not hold. */
export interface AnswerProblem {
  probe: string;
  peerId: string;
  problem: string;
}

export interface BundleReport {
  ok: boolean;
  probes: number;
  answers: number;
  receipts: { verified: number; missing: number };
  /** Answers whose text was recomputed from the bytes their receipt covers. */
  textsFromBytes: number;
  problems: AnswerProblem[];
  /** The verdict recomputed from the bundle, and whether it is the one the bundle states. */
  recomputed: { verdict: string; pValue: number; statistic: number } | null;
  verdictMatches: boolean;
}

const bytesOf = (value: string) => new Uint8Array(Buffer.from(value, 'base64'));

interface Tally {
  verified: number;
  missing: number;
  textsFromBytes: number;
}

function checkAnswer(
  probe: AuditBundle['probes'][number],
  answer: ProbeAnswer,
  problems: AnswerProblem[],
  tally: Tally,
): void {
  const fail = (problem: string) =>
    problems.push({ probe: probe.id, peerId: answer.peerId, problem });
  const { evidence } = answer;
  if (!answer.receipt) {
    tally.missing++;
  } else {
    const check = verifyReceipt(answer.receipt, {
      seller: answer.peerId,
      serviceId: answer.serviceId,
      ...(evidence
        ? {
            request: { ...evidence.request, body: bytesOf(evidence.request.body) },
            response: { status: evidence.response.status, body: bytesOf(evidence.response.body) },
          }
        : {}),
    });
    if (check.ok) tally.verified++;
    else fail(`receipt refused (${check.reason}): ${check.message}`);
  }
  if (!evidence) return;
  const format = formatOfProtocol(evidence.sellerProtocol as ApiProtocol);
  if (!format) {
    fail(`unknown format ${evidence.sellerProtocol}`);
    return;
  }
  const body = Buffer.from(evidence.response.body, 'base64').toString('utf8');
  try {
    const written = comparableText(answerText(format, body, looksLikeStream(body)).text);
    if (written !== answer.text) fail('the text compared is not the text of the answer bytes');
    else tally.textsFromBytes++;
  } catch (error) {
    fail(`the answer bytes do not parse: ${String(error)}`);
  }
}

/** Checks a bundle (a stranger's file: validated first). Never throws on its content. */
export function verifyBundle(input: unknown): BundleReport {
  const parsed = bundleSchema.safeParse(input);
  if (!parsed.success) {
    return {
      ok: false,
      probes: 0,
      answers: 0,
      receipts: { verified: 0, missing: 0 },
      textsFromBytes: 0,
      problems: [
        {
          probe: '',
          peerId: '',
          problem: `not an audit bundle: ${parsed.error.issues[0]?.message}`,
        },
      ],
      recomputed: null,
      verdictMatches: false,
    };
  }
  const bundle = parsed.data;
  const problems: AnswerProblem[] = [];
  const tally = { verified: 0, missing: 0, textsFromBytes: 0 };
  let answers = 0;
  const recomputedProbes: ProbeRecord[] = [];
  for (const probe of bundle.probes) {
    for (const answer of probe.answers) {
      answers++;
      checkAnswer(probe, answer, problems, tally);
    }
    const scores = quantise(apartness(probe.answers.map((answer) => answer.text)));
    if (scores.join() !== probe.scores.join()) {
      problems.push({ probe: probe.id, peerId: '', problem: 'the apartness recomputed differs' });
    }
    recomputedProbes.push({ ...probe, scores });
  }
  const standing = verdictOf(bundle.peerId, recomputedProbes);
  const recomputed = standing
    ? { verdict: standing.verdict, pValue: standing.pValue, statistic: standing.statistic }
    : null;
  const verdictMatches =
    recomputed !== null &&
    recomputed.verdict === bundle.verdict.verdict &&
    recomputed.statistic === bundle.verdict.statistic &&
    Math.abs(recomputed.pValue - bundle.verdict.pValue) <=
      1e-12 * Math.max(1, bundle.verdict.pValue);
  return {
    ok: problems.length === 0 && verdictMatches,
    probes: bundle.probes.length,
    answers,
    receipts: { verified: tally.verified, missing: tally.missing },
    textsFromBytes: tally.textsFromBytes,
    problems,
    recomputed,
    verdictMatches,
  };
}
