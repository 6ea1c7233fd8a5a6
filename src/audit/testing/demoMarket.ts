/**
 * An in-process market for the red-team suite, the auditor's tests and the audit bench: the real
 * demo model answers, the real auditor shapes, writes, schedules and judges; time is virtual, so
 * a day of traffic runs in seconds. libp2p and HTTP are left out (src/audit/audits.e2e.test.ts
 * covers them). Each seller sees each request as a seller would: path, headers (client headers
 * only, in order), body bytes, arrival time and the buyer's channel; an evading seller decides
 * from that view alone whether to answer with the model it announces or a cheaper one.
 */
import { type Offer, OfferIndex } from '../../catalog/index.js';
import { peerIdFor, peerRecord } from '../../catalog/testing/peerRecord.js';
import type { AuditConfig } from '../../config/index.js';
import { type ApiFormat, protocolOfFormat } from '../../formats/index.js';
import { silentLogger } from '../../log/index.js';
import { costOfUsage, type MicroUsd, type TokenPricing, toPriceMicro } from '../../money/index.js';
import { demoAnswer } from '../../seller/index.js';
import { answerText } from '../answerText.js';
import { Auditor } from '../auditor.js';
import type { DeliveredBody } from '../delivered.js';
import type { ProbeRequest, SendProbe } from '../probes.js';
import { AuditStore } from '../store.js';
import type { ProbeRecord } from '../verdict.js';
import type { TimedRequest, UserRequest } from './userTraffic.js';

/** What a seller sees of one request. */
export interface SellerView {
  path: string;
  headers: [string, string][];
  body: Uint8Array;
  json: Record<string, unknown>;
  /** Arrival (virtual ms). */
  at: number;
  /** The buyer identity paying (the channel). */
  identity: string;
  /** Requests this channel brought before this one. */
  channelRequests: number;
  /** When this channel brought its first request. */
  channelOpenedAt: number;
  /** Arrival times of this buyer's earlier requests to this seller, newest last. */
  earlier: readonly number[];
  /** True for an audit probe (never shown to evaders: for measurements only). */
  probe: boolean;
}

/** True when the seller answers this request with the model it announces. */
export type HonestWhen = (view: SellerView) => boolean;

export interface MarketSeller {
  label: string;
  /** Weights it really serves when it cheats (absent: always honest). */
  substitute?: string;
  /** When a cheating seller answers honestly (absent: never). */
  honestWhen?: HonestWhen;
  pricing?: TokenPricing;
}

const DEFAULT_PRICING: TokenPricing = { inputUsdPerMillion: 3, outputUsdPerMillion: 15 };

/** Audits after every answer, with room in the budget. */
export const OPEN_AUDITS: AuditConfig = {
  enabled: true,
  sampleRate: 1,
  dailyBudgetUsd: 1000,
  maxShareOfSpend: 1,
  maxDelayMs: 600_000,
  realAnswers: false,
};

/** A small deterministic generator (mulberry32), so a market run is reproducible. */
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

/** Drops what the buyer never forwards (its own headers, hop headers, credentials). */
function sellerHeaders(headers: readonly [string, string][]): [string, string][] {
  const dropped = new Set(['host', 'connection', 'content-length', 'authorization', 'x-api-key']);
  return headers
    .map(([name, value]): [string, string] => [name.toLowerCase(), value])
    .filter(([name]) => !dropped.has(name) && !name.startsWith('x-svc-'));
}

interface Timer {
  at: number;
  order: number;
  run: () => unknown;
}

export interface MarketOptions {
  model: string;
  sellers: MarketSeller[];
  config?: AuditConfig;
  dataDir?: string;
  seed: number;
  /** Labels the buyer's own routing admits (its trust gate): the only references. Absent: all. */
  trusted?: readonly string[];
  /** Offer every answer to the auditor, even with audits of real answers off (tests). */
  offerAnswers?: boolean;
}

/** Per seller: answers served, and how many of them it answered honestly. */
export interface SellerTally {
  userRequests: number;
  userHonest: number;
  probes: number;
  probesHonest: number;
}

export class DemoMarket {
  readonly auditor: Auditor;
  readonly store: AuditStore;
  readonly index: OfferIndex;
  readonly modelKey: string;
  /** Every request each seller saw (for the bench's classifier and the suite's checks). */
  readonly views = new Map<string, SellerView[]>();
  readonly tally = new Map<string, SellerTally>();
  /** Every probe recorded, oldest first (the store keeps only each seller's window). */
  readonly probes: ProbeRecord[] = [];
  /** Delivered answers the auditor read (audits of real answers). */
  answersRead = 0;
  /** What the buyer's own requests and the audits cost. */
  readonly spend = { own: 0n as MicroUsd, audit: 0n as MicroUsd };
  now = 0;
  private readonly timers: Timer[] = [];
  private order = 0;
  private readonly random: () => number;
  private readonly byPeer: Map<string, MarketSeller>;

  constructor(private readonly options: MarketOptions) {
    this.random = seededRandom(options.seed);
    this.byPeer = new Map(options.sellers.map((seller) => [peerIdFor(seller.label), seller]));
    this.index = OfferIndex.fromPeers(
      options.sellers.map((seller) =>
        peerRecord({
          peerId: seller.label,
          services: [{ id: options.model, pricing: seller.pricing ?? DEFAULT_PRICING }],
        }),
      ),
    );
    this.modelKey = this.index.byModel.keys().next().value!;
    this.store = new AuditStore(options.dataDir, () => this.now);
    const record = this.store.record.bind(this.store);
    this.store.record = (probe) => {
      this.probes.push(probe);
      record(probe);
    };
    this.auditor = new Auditor({
      config: options.config ?? OPEN_AUDITS,
      store: this.store,
      offers: () => this.index,
      logger: silentLogger(),
      clock: () => this.now,
      random: seededRandom(options.seed + 1),
      after: (ms, run) => this.schedule(this.now + ms, run),
      ...(options.trusted ? { admitsReference: this.admitsOf(options.trusted) } : {}),
    });
    const send: SendProbe = (probe) => this.answer(probe.peerId, this.probeView(probe));
    this.auditor.start(send);
  }

  peerId(label: string): string {
    return peerIdFor(label);
  }

  private admitsOf(trusted: readonly string[]) {
    const peers = new Set(trusted.map(peerIdFor));
    return (offer: Offer) => peers.has(offer.peerId);
  }

  private schedule(at: number, run: () => unknown): () => void {
    const timer = { at, order: this.order++, run };
    this.timers.push(timer);
    return () => {
      const index = this.timers.indexOf(timer);
      if (index >= 0) this.timers.splice(index, 1);
    };
  }

  private view(
    peerId: string,
    request: { path: string; headers: [string, string][]; body: Uint8Array; identity: string },
    probe: boolean,
  ): SellerView {
    const seen = this.views.get(peerId) ?? [];
    const channel = seen.filter((earlier) => earlier.identity === request.identity);
    return {
      path: request.path,
      headers: sellerHeaders(request.headers),
      body: request.body,
      json: JSON.parse(new TextDecoder().decode(request.body)) as Record<string, unknown>,
      at: this.now,
      identity: request.identity,
      channelRequests: channel.length,
      channelOpenedAt: channel[0]?.at ?? this.now,
      earlier: channel.slice(-16).map((earlier) => earlier.at),
      probe,
    };
  }

  private probeView(probe: ProbeRequest): SellerView {
    return this.view(probe.peerId, probe, true);
  }

  /** The seller's answer to a request, in the request's own format. */
  private async answer(peerId: string, view: SellerView) {
    const seller = this.byPeer.get(peerId);
    if (!seller) throw new Error(`no seller ${peerId}`);
    const honest = !seller.substitute || (seller.honestWhen?.(view) ?? false);
    const list = this.views.get(peerId) ?? [];
    list.push(view);
    this.views.set(peerId, list);
    const tally = this.tally.get(peerId) ?? {
      userRequests: 0,
      userHonest: 0,
      probes: 0,
      probesHonest: 0,
    };
    if (view.probe) {
      tally.probes++;
      if (honest) tally.probesHonest++;
    } else {
      tally.userRequests++;
      if (honest) tally.userHonest++;
    }
    this.tally.set(peerId, tally);
    const format = formatOfPath(view.path);
    const json: Record<string, unknown> = { ...view.json, model: this.options.model };
    const answer = await demoAnswer(
      protocolOfFormat(format),
      this.options.model,
      json,
      view.body.byteLength,
      { weights: honest ? this.options.model : seller.substitute!, random: this.random },
    );
    const costMicro = costOfUsage(answer.usage, toPriceMicro(seller.pricing ?? DEFAULT_PRICING));
    if (view.probe) this.spend.audit += costMicro;
    const body = answer.parts.join('');
    const { text } = answerText(format, body, json.stream === true);
    return { text, costMicro, body };
  }

  /** One of the buyer's own requests, served by `label` at the current time. */
  async userRequest(label: string, request: UserRequest, identity = 'default'): Promise<void> {
    const peerId = peerIdFor(label);
    const view = this.view(peerId, { ...request, body: request.bytes, identity }, false);
    const arrivedAt = this.now;
    const { costMicro, body } = await this.answer(peerId, view);
    this.spend.own += costMicro;
    // As the buyer does: the answer is offered only while audits of real answers are on.
    const offered = this.auditor.realAnswers || this.options.offerAnswers === true;
    this.auditor.noteAnswer({
      peerId,
      modelKey: this.modelKey,
      identity,
      costMicro,
      arrivedAt,
      request: () => ({
        format: request.format,
        path: request.path,
        body: request.body,
        rawBody: request.bytes,
        headers: sellerHeaders(request.headers),
        identity,
      }),
      ...(offered ? { answer: () => this.delivered(request.format, body) } : {}),
    });
  }

  /** A delivered answer as the buyer offers it to the auditor (counted in `answersRead`). */
  private delivered(format: ApiFormat, body: string): DeliveredBody {
    this.answersRead++;
    return { sellerProtocol: protocolOfFormat(format), body: new TextEncoder().encode(body) };
  }

  /** Runs `traffic` (served by `label`) and every timer due before `until`, in time order. */
  async run(label: string, traffic: readonly TimedRequest[], until = Number.POSITIVE_INFINITY) {
    for (const item of traffic) this.schedule(item.at, () => this.userRequest(label, item.request));
    await this.drain(until);
  }

  /** Runs due timers in time order until none is left before `until`. */
  async drain(until = Number.POSITIVE_INFINITY): Promise<void> {
    for (;;) {
      // Let deferred work (shapes) run before the next event.
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.timers.sort((a, b) => a.at - b.at || a.order - b.order);
      const next = this.timers[0];
      if (!next || next.at > until) return;
      this.timers.shift();
      this.now = Math.max(this.now, next.at);
      await next.run();
    }
  }

  /** The verdict on `label`. */
  verdict(label: string) {
    return this.auditor.standing(peerIdFor(label), this.modelKey);
  }

  close(): void {
    void this.auditor.stop();
    this.store.close();
  }
}

const PATH_FORMATS: Record<string, ApiFormat> = {
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'responses',
  '/v1/messages': 'messages',
};

function formatOfPath(path: string): ApiFormat {
  const format = PATH_FORMATS[path];
  if (!format) throw new Error(`no format for ${path}`);
  return format;
}
