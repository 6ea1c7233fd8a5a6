/**
 * Audit history and the day's spend, kept in `<data-dir>/buyer/audits.json` so verdicts survive
 * restarts. Bounded: the last VERDICT_WINDOW audits per (seller, model), answers shortened, at
 * most MAX_SELLERS pairs. A file that does not parse is set aside and audits start afresh (a
 * lost history only means sellers are audited again).
 */
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ensureDir, writeFileAtomic } from '../config/index.js';
import type { MicroUsd } from '../money/index.js';
import { type AuditEvidence, type SellerAudit, VERDICT_WINDOW, verdictOf } from './verdict.js';

/** Longest prompt or answer kept as evidence. */
const MAX_EVIDENCE_CHARS = 400;
/** Most (seller, model) pairs remembered; the least recently audited goes first. */
const MAX_SELLERS = 2_000;

const text = z.string().max(10_000);
const evidenceSchema = z.object({
  kind: z.enum(['spot', 'sampled']),
  at: z.number(),
  outcome: z.enum(['agree', 'disagree', 'inconclusive']),
  prompts: z.array(text).max(16),
  answers: z.array(text).max(16),
  references: z.array(text).max(16),
  referencePeers: z.array(z.string().max(200)).max(16),
  statistic: z.number(),
  prefix: z.number().nullable(),
  pValue: z.number().nullable(),
  costUsd: z.string().max(32),
});
const fileSchema = z.object({
  day: z.string().max(10),
  auditSpentMicro: z.string().regex(/^\d{1,18}$/),
  ownSpentMicro: z.string().regex(/^\d{1,18}$/),
  sellers: z.record(z.string().max(400), z.array(evidenceSchema).max(VERDICT_WINDOW)),
});

const shorten = (value: string) =>
  value.length > MAX_EVIDENCE_CHARS ? `${value.slice(0, MAX_EVIDENCE_CHARS)}…` : value;

const keyOf = (peerId: string, modelKey: string) => `${peerId}|${modelKey}`;

/** The UTC day of `ms`, `YYYY-MM-DD`. */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export class AuditStore {
  readonly path: string;
  private day: string;
  /** Epoch ms of `day`'s start: most calls need no date formatting. */
  private dayStartMs: number;
  private auditSpent = 0n;
  private ownSpent = 0n;
  private readonly sellers = new Map<string, AuditEvidence[]>();

  constructor(
    dataDir: string,
    private readonly clock: () => number,
    warn: (message: string) => void = () => {},
  ) {
    this.path = join(dataDir, 'buyer', 'audits.json');
    this.day = dayOf(clock());
    this.dayStartMs = Date.parse(this.day);
    if (!existsSync(this.path)) return;
    try {
      const file = fileSchema.parse(JSON.parse(readFileSync(this.path, 'utf8')));
      for (const [key, history] of Object.entries(file.sellers).slice(-MAX_SELLERS)) {
        this.sellers.set(key, history);
      }
      if (file.day === this.day) {
        this.auditSpent = BigInt(file.auditSpentMicro);
        this.ownSpent = BigInt(file.ownSpentMicro);
      }
    } catch (error) {
      renameSync(this.path, `${this.path}.invalid`);
      warn(`${this.path} was unreadable (${String(error)}); moved aside, audits start afresh`);
    }
  }

  private rollDay(): void {
    const now = this.clock();
    if (now >= this.dayStartMs && now - this.dayStartMs < 86_400_000) return;
    const today = dayOf(now);
    this.dayStartMs = Date.parse(today);
    if (today === this.day) return;
    this.day = today;
    this.auditSpent = 0n;
    this.ownSpent = 0n;
  }

  /** Today's spend: on audits, and on the buyer's own (non-audit) requests. */
  spentToday(): { audit: MicroUsd; own: MicroUsd } {
    this.rollDay();
    return { audit: this.auditSpent, own: this.ownSpent };
  }

  /** Adds to today's own spend (kept in memory; written with the next audit). */
  addOwnSpend(micro: MicroUsd): void {
    this.rollDay();
    this.ownSpent += micro;
  }

  /** Records one audit and its cost, and writes the file. */
  record(peerId: string, modelKey: string, evidence: AuditEvidence, costMicro: MicroUsd): void {
    this.rollDay();
    this.auditSpent += costMicro;
    const key = keyOf(peerId, modelKey);
    const history = this.sellers.get(key) ?? [];
    history.push({
      ...evidence,
      prompts: evidence.prompts.map(shorten),
      answers: evidence.answers.map(shorten),
      references: evidence.references.map(shorten),
    });
    this.sellers.delete(key);
    this.sellers.set(key, history.slice(-VERDICT_WINDOW));
    while (this.sellers.size > MAX_SELLERS) {
      const oldest = this.sellers.keys().next().value;
      if (oldest === undefined) break;
      this.sellers.delete(oldest);
    }
    this.save();
  }

  /** Records today's spend without an audit (e.g. an audit that failed half way). */
  addAuditSpend(micro: MicroUsd): void {
    this.rollDay();
    this.auditSpent += micro;
    this.save();
  }

  /** The standing of a seller for a model; undefined before any conclusive audit. */
  audit(peerId: string, modelKey: string): SellerAudit | undefined {
    const history = this.sellers.get(keyOf(peerId, modelKey));
    return history ? verdictOf(history) : undefined;
  }

  private save(): void {
    ensureDir(join(this.path, '..'));
    const file: z.infer<typeof fileSchema> = {
      day: this.day,
      auditSpentMicro: this.auditSpent.toString(),
      ownSpentMicro: this.ownSpent.toString(),
      sellers: Object.fromEntries(this.sellers),
    };
    writeFileAtomic(this.path, `${JSON.stringify(file)}\n`);
  }
}
