/**
 * The buyer's auditor (docs/decisions/164-audits-a-seller-cannot-tell-from-traffic.md, docs/guide/trust.md
 * "Trust and audits"). After a delivered answer, with probability `sampleRate`, it writes a
 * probe: a request in the shape of one of the buyer's own recent requests (same format, path,
 * headers, parameters, structure and lengths; new words), paid by the same identity. The probe
 * goes to the seller that served and to two or three other sellers of the model, each copy at
 * its own time, drawn from the gaps between the buyer's own requests. Once the copies are
 * answered, how far each answer stands from the others joins each seller's window, and the
 * exact odd-one-out test gives the verdict (src/audit/verdict.ts). Audits stay within the day's
 * allowance of each identity. With `realAnswers` on, a sampled request is replayed instead
 * (src/audit/replay.ts, docs/decisions/221-audits-of-real-answers.md).
 */
import { randomBytes } from 'node:crypto';
import type { AuditSource, Offer, OfferAudit, OfferIndex } from '../catalog/index.js';
import type { AuditConfig } from '../config/index.js';
import { errorMessage } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { formatUsd, type MicroUsd, usdNumberToMicro } from '../money/index.js';
import type { DeliveredAnswer } from './delivered.js';
import { renderHeaders, renderProbe, writeProbe } from './generator/fill.js';
import { ProbeCosts } from './probeCosts.js';
import type { SendProbe } from './probes.js';
import { TrafficProfile } from './profile.js';
import { type Copies, type Replay, replayCopies, replayOf } from './replay.js';
import { type ShapeInput, shapeOf } from './shape.js';
import { apartness, comparableText, quantise } from './statistics.js';
import type { AuditStore } from './store.js';
import type { ProbeAnswer, SellerAudit } from './verdict.js';

/** Other sellers each probe goes to: at least two (a majority), at most three. */
const MIN_REFERENCES = 2;
const MAX_REFERENCES = 3;
/** Days the audit allowance is counted over (src/audit/auditor.ts `allowance`). */
const ALLOWANCE_DAYS = 7;
/** Probes under way at most. */
const MAX_PENDING = 16;
/** Times a copy's wait starts again because the buyer sent a request first. */
const MAX_RESTARTS = 64;

/** Runs `run` after `ms`; returns a cancel. Tests pass their own clock. */
export type After = (ms: number, run: () => Promise<void>) => () => void;

const realAfter: After = (ms, run) => {
  const timer = setTimeout(() => void run(), ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export interface AuditorDeps {
  config: AuditConfig;
  store: AuditStore;
  offers: () => OfferIndex;
  logger: Logger;
  clock: () => number;
  random?: () => number;
  after?: After;
  /**
   * Whether the buyer's own routing would use a seller (its trust gate, allow and block lists,
   * price caps): only such sellers are references. Absent: every seller may be one.
   */
  admitsReference?: (offer: Offer) => boolean;
}

interface Pending extends Copies {
  modelKey: string;
  identity: string;
  offers: Offer[];
  answers: (ProbeAnswer | null)[];
  left: number;
  /** The estimate held against the allowance while the probe is under way. */
  reserved: MicroUsd;
  /** The estimate before calibration, and what the copies answered so far cost. */
  estimated: MicroUsd;
  spent: MicroUsd;
  cancels: (() => void)[];
}

export class Auditor implements AuditSource {
  /** Marks the buyer's own audit requests (src/audit/ask.ts). */
  readonly marker = randomBytes(16).toString('hex');
  readonly profile: TrafficProfile;
  private send: SendProbe | undefined;
  private readonly pending = new Map<string, Pending>();
  private readonly reserved = new Map<string, MicroUsd>();
  private readonly costs = new ProbeCosts();
  private readonly abort = new AbortController();
  private readonly random: () => number;
  private readonly after: After;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly deps: AuditorDeps) {
    this.random = deps.random ?? Math.random;
    this.after = deps.after ?? realAfter;
    this.profile = new TrafficProfile(this.random);
  }

  get enabled(): boolean {
    return this.deps.config.enabled;
  }

  /** True when sampled answers are audited as they were delivered (the buyer then keeps them). */
  get realAnswers(): boolean {
    return this.deps.config.enabled && this.deps.config.realAnswers;
  }

  /** Starts auditing through `send` (the buyer's proxy, once it listens). */
  start(send: SendProbe): void {
    this.send = send;
  }

  /** Stops: probes under way are dropped, copies in flight aborted. */
  async stop(): Promise<void> {
    this.abort.abort(new Error('buyer stopping'));
    for (const probe of this.pending.values()) for (const cancel of probe.cancels) cancel();
    this.pending.clear();
    this.wakeIdle();
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

  /** The verdict with the probes behind it (`/_svc/peers`, `svc audit show`). */
  standing(peerId: string, modelKey: string): SellerAudit | undefined {
    return this.deps.store.audit(peerId, modelKey);
  }

  /**
   * Called once a user's answer is delivered: its cost counts toward the identity's own spend,
   * its pace and shape join the traffic profile, and maybe a probe is planned. Never waits.
   */
  noteAnswer(answer: DeliveredAnswer): void {
    const { store, config } = this.deps;
    store.addOwnSpend(answer.identity, answer.costMicro);
    this.costs.noteAnswer(answer.identity, answer.modelKey, answer.costMicro);
    this.profile.noteArrival(answer.identity, answer.modelKey, answer.arrivedAt, answer.idAgeMs);
    const { request } = answer;
    const shape =
      request !== undefined && this.profile.wantsShape(answer.identity, answer.modelKey);
    const probe =
      config.enabled &&
      this.send !== undefined &&
      !this.abort.signal.aborted &&
      this.random() < config.sampleRate;
    if (!shape && !probe) return;
    // On a later turn of the event loop: the answer's own bookkeeping finishes first.
    setImmediate(() => {
      if (shape) this.noteShape(answer, request!);
      if (probe && !this.abort.signal.aborted) this.plan(answer);
    });
  }

  private noteShape(answer: DeliveredAnswer, request: () => ShapeInput): void {
    try {
      const shape = shapeOf(request());
      if (shape) this.profile.noteShape(answer.modelKey, { ...shape, servedBy: answer.peerId });
    } catch (error) {
      this.deps.logger.debug({ err: errorMessage(error) }, 'request not shaped for audits');
    }
  }

  /** Resolves once no probe is under way (tests and the bench wait on it). */
  idle(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private wakeIdle(): void {
    if (this.pending.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * Micro-USD audits of `identity` may still spend (none without own spend): over the last
   * ALLOWANCE_DAYS days, at most `dailyBudgetUsd` a day and `maxShareOfSpend` of the identity's
   * own spend in those days. A window of days, not one day, so a buyer whose daily spend is below
   * one probe's cost still gets a probe now and then.
   */
  private allowance(identity: string): MicroUsd {
    const { config, store } = this.deps;
    const spent = store.spentOver(identity, ALLOWANCE_DAYS);
    const budget = usdNumberToMicro(config.dailyBudgetUsd) * BigInt(ALLOWANCE_DAYS);
    // The share is applied in parts per million, in integers.
    const share = (spent.own * BigInt(Math.round(config.maxShareOfSpend * 1_000_000))) / 1_000_000n;
    const cap = share < budget ? share : budget;
    return cap - spent.audit - (this.reserved.get(identity) ?? 0n);
  }

  /**
   * The audited seller and up to MAX_REFERENCES others (reachable, not failed, admitted by the
   * buyer's own routing), or undefined. References judge the audited seller: admitted by
   * anything less than the buyer's trust gate, a seller's own fresh keys serving its cheaper
   * model would be the majority that makes an honest seller the odd one
   * (docs/decisions/219-references-the-buyer-trusts.md).
   */
  private participants(peerId: string, modelKey: string): Offer[] | undefined {
    const model = this.deps.offers().byModel.get(modelKey);
    const target = model?.offers.find((o) => o.peerId === peerId && o.reachable);
    if (!model || !target) return undefined;
    const seen = new Set<string>([peerId]);
    const admits = this.deps.admitsReference ?? (() => true);
    const others = model.offers.filter(
      (o) =>
        o.reachable &&
        o.type === 'text' &&
        !seen.has(o.peerId) &&
        seen.add(o.peerId) &&
        this.audit(o.peerId, modelKey)?.verdict !== 'failed' &&
        admits(o),
    );
    for (let i = others.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [others[i], others[j]] = [others[j]!, others[i]!];
    }
    if (others.length < MIN_REFERENCES) return undefined;
    return [target, ...others.slice(0, MAX_REFERENCES)];
  }

  private plan(answer: DeliveredAnswer): void {
    const { peerId, modelKey, identity } = answer;
    // Planned for any answer, whoever is being probed already: a limit per seller would make
    // probes rarer when the buyer's requests come fast, which a seller could see.
    if (this.pending.size >= MAX_PENDING) return;
    const offers = this.participants(peerId, modelKey);
    if (!offers) return; // Too few other sellers to tell who is off.
    const left = this.allowance(identity);
    if (left <= 0n) return;
    const replay = this.deps.config.realAnswers ? this.replay(answer, offers[0]!) : undefined;
    // A replay pays the references only: the audited seller's answer was the user's.
    const estimated = this.costs.estimate(identity, modelKey, offers, replay ? 1 : 0);
    const estimate = this.costs.calibrated(identity, estimated);
    if (estimate > left) return;
    const probe: Pending = {
      ...(replay ? replayCopies(replay) : this.probeCopies(identity, modelKey)),
      modelKey,
      identity,
      offers,
      answers: offers.map(() => null),
      left: offers.length,
      reserved: estimate,
      estimated,
      spent: 0n,
      cancels: [],
    };
    if (replay) {
      probe.answers[0] = replay.audited;
      probe.left--;
    }
    const id = probe.id;
    this.reserved.set(identity, (this.reserved.get(identity) ?? 0n) + estimate);
    this.pending.set(id, probe);
    for (let index = replay ? 1 : 0; index < offers.length; index++) {
      this.scheduleCopy(probe, index, 0);
    }
  }

  /** The replay of a sampled answer, or undefined (logged) when it cannot be replayed. */
  private replay(answer: DeliveredAnswer, audited: Offer): Replay | undefined {
    try {
      const replay = replayOf(answer, audited.serviceId);
      if (typeof replay !== 'string') return replay;
      this.deps.logger.debug({ peerId: answer.peerId, why: replay }, 'answer audited by a probe');
    } catch (error) {
      this.deps.logger.debug({ err: errorMessage(error) }, 'answer not replayed');
    }
    return undefined;
  }

  private probeCopies(identity: string, modelKey: string): Copies {
    // Chosen only once the probe is on: which shapes fit must not depend on their size.
    const shape = this.profile.shapeFor(identity, modelKey);
    const written = writeProbe(shape, this.random);
    return {
      id: `probe_${randomBytes(8).toString('hex')}`,
      head: shape,
      bodyFor: (offer) => renderProbe(written, shape.servedBy === offer.peerId, this.random),
    };
  }

  /**
   * Each copy leaves after a quiet gap: the one that came before the request its shape was taken
   * from (else one drawn from the buyer's gaps), counted from the buyer's last request; when one
   * of the buyer's requests arrives first, the wait starts again from it. So a copy follows the
   * last request by a gap that kind of client has, not by that gap plus whatever passed before
   * the wait began (the answer's time, a wait a request interrupted), which a seller measuring
   * the gaps before each request would see as probes arriving late.
   */
  private scheduleCopy(probe: Pending, index: number, restarts: number): void {
    const { identity, modelKey } = probe;
    const gap = probe.head.gapMs ?? this.profile.gapFor(identity, modelKey);
    const delay = Math.min(this.deps.config.maxDelayMs, gap);
    const last = this.profile.lastArrival(identity, modelKey);
    const wait = last === undefined ? delay : Math.max(0, last + delay - this.deps.clock());
    probe.cancels.push(
      this.after(wait, async () => {
        const latest = this.profile.lastArrival(identity, modelKey);
        const newer = latest !== undefined && (last === undefined || latest > last);
        if (newer && restarts < MAX_RESTARTS) {
          this.scheduleCopy(probe, index, restarts + 1);
          return;
        }
        await this.sendCopy(probe.id, probe, index);
      }),
    );
  }

  private async sendCopy(id: string, probe: Pending, index: number): Promise<void> {
    const offer = probe.offers[index]!;
    const { head } = probe;
    try {
      const reply = await this.send!(
        {
          peerId: offer.peerId,
          serviceId: offer.serviceId,
          identity: probe.identity,
          format: head.format,
          path: head.path,
          headers: renderHeaders(head.headers, this.random),
          body: probe.bodyFor(offer),
          ...(head.maxCostUsd !== undefined ? { maxCostUsd: head.maxCostUsd } : {}),
          ...(head.idAgeMs !== undefined ? { idAgeMs: head.idAgeMs } : {}),
        },
        this.abort.signal,
      );
      if (reply.costMicro > 0n) this.deps.store.addAuditSpend(probe.identity, reply.costMicro);
      probe.spent += reply.costMicro;
      probe.answers[index] = {
        peerId: offer.peerId,
        serviceId: offer.serviceId,
        text: comparableText(reply.text),
        costUsd: formatUsd(reply.costMicro),
        ...(reply.receipt ? { receipt: reply.receipt } : {}),
        ...(reply.evidence ? { evidence: reply.evidence } : {}),
      };
    } catch (error) {
      if (!this.abort.signal.aborted) {
        this.deps.logger.warn(
          { peerId: offer.peerId, model: probe.modelKey, err: errorMessage(error) },
          'audit request failed',
        );
      }
    }
    if (--probe.left > 0 || this.pending.get(id) !== probe) return;
    this.finish(id, probe);
  }

  private finish(id: string, probe: Pending): void {
    this.pending.delete(id);
    this.costs.calibrate(probe.identity, probe.estimated, probe.spent);
    const reserved = (this.reserved.get(probe.identity) ?? 0n) - probe.reserved;
    if (reserved > 0n) this.reserved.set(probe.identity, reserved);
    else this.reserved.delete(probe.identity);
    const answers = probe.answers.filter((answer): answer is ProbeAnswer => answer !== null);
    if (answers.length >= 3 && !this.abort.signal.aborted) {
      try {
        this.deps.store.record({
          id: probe.id,
          at: this.deps.clock(),
          modelKey: probe.modelKey,
          identity: probe.identity,
          format: probe.head.format,
          answers,
          scores: quantise(apartness(answers.map((answer) => answer.text))),
        });
      } catch (error) {
        this.deps.logger.warn({ err: errorMessage(error) }, 'audit not recorded');
      }
    }
    this.wakeIdle();
  }
}
