/**
 * The buyer's auditor (docs/decisions/153-model-audits.md, README "Trust and audits"): after a
 * delivered answer, with probability `sampleRate`, the seller that served it is queued for an
 * audit of that model. Audits run one at a time, off the request path, against two other
 * sellers of the model: a spot re-execution at temperature 0 with a fixed seed, or (every other
 * audit) a two-sample test over sampled answers. Each stays within the day's audit allowance.
 */
import { randomBytes } from 'node:crypto';
import type { AuditSource, Offer, OfferAudit, OfferIndex } from '../catalog/index.js';
import type { AuditConfig } from '../config/index.js';
import { errorMessage } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { formatUsd, type MicroUsd, maxCostOfRequest, usdNumberToMicro } from '../money/index.js';
import { type AskSeller, AUDIT_MAX_TOKENS, type AuditAnswer, type AuditQuestion } from './ask.js';
import { pickCanaries } from './canaries.js';
import type { AuditStore } from './store.js';
import {
  type AuditEvidence,
  type AuditKind,
  judgeSampled,
  judgeSpot,
  type SellerAudit,
  type SellerSamples,
} from './verdict.js';

/** Other sellers each audit compares with (two, so a disagreement has a majority). */
const REFERENCES = 2;
/** Canary prompts of a sampled audit, and answers per prompt from each seller. */
const SAMPLED_PROMPTS = 3;
const SAMPLES_PER_PROMPT = 4;
/** Audits waiting at most; more are dropped (the next sampled answer queues again). */
const MAX_QUEUE = 16;
/** Input tokens assumed per canary when estimating an audit's cost beforehand. */
const CANARY_INPUT_TOKENS = 64;
/** Temperature of sampled answers. */
const SAMPLED_TEMPERATURE = 1;

export interface AuditorDeps {
  config: AuditConfig;
  store: AuditStore;
  offers: () => OfferIndex;
  logger: Logger;
  clock: () => number;
  random?: () => number;
}

interface Job {
  peerId: string;
  modelKey: string;
}

/** Requests of an audit of `kind` (the confirming re-sample of a sampled audit included). */
function auditRequests(kind: AuditKind): number {
  return kind === 'spot'
    ? 1 + REFERENCES
    : 2 * SAMPLED_PROMPTS * SAMPLES_PER_PROMPT * (1 + REFERENCES);
}

export class Auditor implements AuditSource {
  /** Marks the buyer's own audit requests (src/audit/ask.ts). */
  readonly marker = randomBytes(16).toString('hex');
  private ask: AskSeller | undefined;
  private readonly queue: Job[] = [];
  private readonly kinds = new Map<string, number>();
  private draining: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private readonly random: () => number;

  constructor(private readonly deps: AuditorDeps) {
    this.random = deps.random ?? Math.random;
  }

  /** A whole number in [1, 2^31) (seeds). */
  private seed(): number {
    return 1 + Math.floor(this.random() * (2 ** 31 - 1));
  }

  private canaries(count: number): string[] {
    return pickCanaries(count, (limit) => Math.floor(this.random() * limit));
  }

  get enabled(): boolean {
    return this.deps.config.enabled;
  }

  /** Starts auditing through `ask` (the buyer's proxy, once it listens). */
  start(ask: AskSeller): void {
    this.ask = ask;
  }

  /** Stops: the audit under way is aborted, queued ones are dropped. */
  async stop(): Promise<void> {
    this.queue.length = 0;
    this.abort.abort(new Error('buyer stopping'));
    await this.draining;
  }

  /** The verdict routing and the catalog use. */
  audit(peerId: string, modelKey: string): OfferAudit | undefined {
    const standing = this.deps.store.audit(peerId, modelKey);
    return standing
      ? {
          verdict: standing.verdict,
          audits: standing.audits,
          disagreements: standing.disagreements,
        }
      : undefined;
  }

  /** The verdict with its evidence (`/_svc/peers`). */
  standing(peerId: string, modelKey: string): SellerAudit | undefined {
    return this.deps.store.audit(peerId, modelKey);
  }

  /**
   * Called once a user's answer is delivered: adds its cost to the day's own spend and maybe
   * queues an audit of the seller. Never waits for the audit.
   */
  noteAnswer(peerId: string, modelKey: string, costMicro: MicroUsd): void {
    this.deps.store.addOwnSpend(costMicro);
    const { config } = this.deps;
    if (!config.enabled || !this.ask || this.abort.signal.aborted) return;
    if (this.random() >= config.sampleRate) return;
    if (this.queue.length >= MAX_QUEUE) return;
    if (this.queue.some((job) => job.peerId === peerId && job.modelKey === modelKey)) return;
    this.queue.push({ peerId, modelKey });
    // Started on a later turn of the event loop: the answer's own bookkeeping finishes first.
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.drain())
      .finally(() => {
        this.draining = undefined;
      });
  }

  /** Resolves once the queue is empty (tests and the bench wait on it). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    for (let job = this.queue.shift(); job; job = this.queue.shift()) {
      if (this.abort.signal.aborted) return;
      try {
        await this.run(job);
      } catch (error) {
        if (!this.abort.signal.aborted) {
          this.deps.logger.warn(
            { peerId: job.peerId, model: job.modelKey, err: errorMessage(error) },
            'audit failed',
          );
        }
      }
    }
  }

  /** Micro-USD audits may still spend today. */
  private allowance(): MicroUsd {
    const { config, store } = this.deps;
    const spent = store.spentToday();
    const budget = usdNumberToMicro(config.dailyBudgetUsd);
    // The share is applied in parts per million, in integers.
    const share = (spent.own * BigInt(Math.round(config.maxShareOfSpend * 1_000_000))) / 1_000_000n;
    const cap = share < budget ? share : budget;
    return cap - spent.audit;
  }

  /** True when an audit estimated at `estimate` fits today's allowance (none without own spend). */
  private affordable(estimate: MicroUsd): boolean {
    const left = this.allowance();
    return left > 0n && estimate <= left;
  }

  /** The target and REFERENCES other reachable sellers of the model not failed by audits. */
  private participants(job: Job): Offer[] | undefined {
    const model = this.deps.offers().byModel.get(job.modelKey);
    const target = model?.offers.find((o) => o.peerId === job.peerId && o.reachable);
    if (!model || !target) return undefined;
    const others = model.offers.filter(
      (o) =>
        o.reachable &&
        o.peerId !== job.peerId &&
        o.type === 'text' &&
        this.audit(o.peerId, job.modelKey)?.verdict !== 'failed',
    );
    const seen = new Set<string>();
    const distinct = others.filter((o) => !seen.has(o.peerId) && seen.add(o.peerId));
    for (let i = distinct.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [distinct[i], distinct[j]] = [distinct[j]!, distinct[i]!];
    }
    if (distinct.length < REFERENCES) return undefined;
    return [target, ...distinct.slice(0, REFERENCES)];
  }

  private async run(job: Job): Promise<void> {
    const sellers = this.participants(job);
    if (!sellers) return; // Too few other sellers to tell who is wrong.
    const key = `${job.peerId}|${job.modelKey}`;
    const turn = this.kinds.get(key) ?? 0;
    const perRequest = sellers.reduce(
      (sum, offer) => sum + maxCostOfRequest(CANARY_INPUT_TOKENS, AUDIT_MAX_TOKENS, offer.price),
      0n,
    );
    const fits = (kind: AuditKind) =>
      this.affordable(perRequest * BigInt(auditRequests(kind) / sellers.length));
    // Spot checks and sampled tests take turns; a sampled test the allowance cannot cover
    // gives way to a spot check.
    const planned: AuditKind = turn % 2 === 0 ? 'spot' : 'sampled';
    const kind: AuditKind = planned === 'sampled' && !fits('sampled') ? 'spot' : planned;
    if (!fits(kind)) return;
    if (kind === planned) this.kinds.set(key, turn + 1);
    let cost = 0n;
    const ask = async (offer: Offer, question: Omit<AuditQuestion, 'peerId' | 'serviceId'>) => {
      const answer: AuditAnswer = await this.ask!(
        { ...question, peerId: offer.peerId, serviceId: offer.serviceId },
        this.abort.signal,
      );
      cost += answer.costMicro;
      return answer.text;
    };
    try {
      const evidence =
        kind === 'spot' ? await this.spot(sellers, ask) : await this.sampled(sellers, ask);
      this.deps.store.record(
        job.peerId,
        job.modelKey,
        { ...evidence, costUsd: formatUsd(cost) },
        cost,
      );
    } catch (error) {
      if (cost > 0n) this.deps.store.addAuditSpend(cost);
      throw error;
    }
  }

  private async spot(
    sellers: Offer[],
    ask: (offer: Offer, question: Omit<AuditQuestion, 'peerId' | 'serviceId'>) => Promise<string>,
  ): Promise<Omit<AuditEvidence, 'costUsd'>> {
    const [prompt] = this.canaries(1);
    const question = { prompt: prompt!, temperature: 0, seed: this.seed() };
    const answers: string[] = [];
    for (const offer of sellers) answers.push(await ask(offer, question));
    const [own, ...references] = answers;
    const judged = judgeSpot(own!, references);
    return {
      kind: 'spot',
      at: this.deps.clock(),
      outcome: judged.outcome,
      prompts: [prompt!],
      answers: [own!],
      references,
      referencePeers: sellers.slice(1).map((offer) => offer.peerId),
      statistic: judged.similarity,
      prefix: judged.prefix,
      pValue: null,
    };
  }

  private async sampled(
    sellers: Offer[],
    ask: (offer: Offer, question: Omit<AuditQuestion, 'peerId' | 'serviceId'>) => Promise<string>,
  ): Promise<Omit<AuditEvidence, 'costUsd'>> {
    const prompts = this.canaries(SAMPLED_PROMPTS);
    const collect = async (): Promise<SellerSamples[]> => {
      const all: SellerSamples[] = [];
      for (const offer of sellers) {
        const perPrompt: string[][] = [];
        for (const prompt of prompts) {
          const answers: string[] = [];
          for (let i = 0; i < SAMPLES_PER_PROMPT; i++) {
            answers.push(await ask(offer, { prompt, temperature: SAMPLED_TEMPERATURE }));
          }
          perPrompt.push(answers);
        }
        all.push(perPrompt);
      }
      return all;
    };
    const seed = this.seed();
    let samples = await collect();
    let judged = judgeSampled(samples, seed);
    if (judged.outcome === 'needs-confirmation') {
      // A rejection counts only when a fresh sample rejects again.
      samples = await collect();
      const again = judgeSampled(samples, seed + 1);
      judged = {
        outcome: again.outcome === 'needs-confirmation' ? 'disagree' : again.outcome,
        test: again.test,
      };
    }
    return {
      kind: 'sampled',
      at: this.deps.clock(),
      outcome: judged.outcome === 'needs-confirmation' ? 'disagree' : judged.outcome,
      prompts,
      answers: samples[0]!.map((answers) => answers[0]!),
      references: samples.slice(1).flatMap((seller) => seller.map((answers) => answers[0]!)),
      referencePeers: sellers.slice(1).map((offer) => offer.peerId),
      statistic: judged.test.statistic,
      prefix: null,
      pValue: judged.test.pValue,
    };
  }
}
