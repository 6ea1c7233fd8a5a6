/** The buyer's long-lived state and injected dependencies, shared by its route handlers. */

import { Auditor, AuditStore } from '../audit/index.js';
import { OfferIndex, type ReputationSource } from '../catalog/index.js';
import type { BuyerConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { PeerDirectory, PeerTransport } from '../network/index.js';
import {
  AffinityStore,
  type EffectivePreferences,
  HealthTracker,
  ownPreferences,
  preferenceExclusion,
  RouteStateStore,
  SpeedTracker,
} from '../routing/index.js';
import { EvidenceStore } from './evidence.js';
import { ControlSecret } from './gatewayAuth.js';
import { BuyerMetrics } from './metrics.js';
import type { BuyerPayments } from './payments.js';
import { ReceiptSampler } from './receiptSample.js';
import { RequestRecords } from './requestRecords.js';
import { ResponseStore } from './responseStore.js';
import type { Translator } from './translator.js';

export interface BuyerDependencies {
  config: BuyerConfig;
  dataDir: string;
  directory: PeerDirectory;
  transport: PeerTransport;
  payments: BuyerPayments;
  reputation: ReputationSource;
  translator: Translator;
  logger: Logger;
  clock: () => number;
  version: string;
  /** Payment channels for `GET /_svc/channels`. */
  channels: () => unknown[] | Promise<unknown[]>;
}

/** Rebuild the offer index at most this often when the directory shows no change. */
const INDEX_MAX_AGE_MS = 5_000;

export class BuyerService {
  readonly health: HealthTracker;
  /** Measured time to first token and tokens per second per (seller, model). */
  readonly speed = new SpeedTracker();
  readonly affinity = new AffinityStore();
  readonly records: RequestRecords;
  /** Responses returned on /v1/responses, for later turns (decision 173). */
  readonly responses: ResponseStore;
  readonly metrics = new BuyerMetrics();
  readonly state: RouteStateStore;
  readonly controlSecret: ControlSecret;
  readonly ownPreferences: EffectivePreferences;
  readonly startedAt: number;
  /** Audits of the model each seller serves (docs/guide/trust.md). */
  readonly audits: Auditor;
  readonly auditStore: AuditStore;
  /** Audit answers' verified receipts with their bytes, by request id, until taken. */
  readonly evidence: EvidenceStore;
  readonly receiptSampler: ReceiptSampler;
  private index: { fingerprint: string; builtAt: number; value: OfferIndex } | undefined;

  constructor(readonly deps: BuyerDependencies) {
    this.health = new HealthTracker(deps.clock);
    deps.directory.onBack?.((peerId) => {
      this.health.connectionBack(peerId);
      deps.payments.sellerBack?.(peerId);
    });
    this.state = new RouteStateStore(deps.dataDir);
    // Records a stopped buyer left open are closed by `startBuyer` before it serves.
    this.records = new RequestRecords(deps.dataDir, {
      clock: deps.clock,
      onFlushError: (error) =>
        deps.logger.warn({ err: error }, 'writing request records failed; retried with the next'),
    });
    this.responses = new ResponseStore(deps.dataDir, {
      maxBytes: deps.config.responseStore.maxBytes,
      maxAgeMs: deps.config.responseStore.maxAgeDays * 86_400_000,
      clock: deps.clock,
      onFlushError: (error) =>
        deps.logger.warn({ err: error }, 'writing kept responses failed; retried with the next'),
    });
    this.controlSecret = new ControlSecret(deps.dataDir);
    this.ownPreferences = ownPreferences(deps.config.routingPreferences);
    this.startedAt = deps.clock();
    this.auditStore = new AuditStore(deps.dataDir, deps.clock, (message) =>
      deps.logger.warn(message),
    );
    this.evidence = new EvidenceStore(deps.clock);
    this.receiptSampler = new ReceiptSampler(deps.config.receiptCheckShare, deps.clock);
    // Refused receipts survive a restart for as long as their request records (7 days): the
    // seller stays penalised, and suspect for the hour after its last refusal.
    for (const [peerId, refused] of this.records.refusedFreeReceiptsSince(0)) {
      deps.reputation.penalise?.(peerId, refused.count);
      this.receiptSampler.suspect(peerId, refused.lastAt);
    }
    this.audits = new Auditor({
      config: deps.config.audit,
      store: this.auditStore,
      offers: () => this.offers(),
      logger: deps.logger,
      clock: deps.clock,
      admitsReference: (offer) =>
        preferenceExclusion(offer, this.ownPreferences, deps.reputation.score(offer.peerId)) ===
        undefined,
    });
  }

  /** Offers of the cached peers, rebuilt when the directory changes. */
  offers(): OfferIndex {
    const status = this.deps.directory.status();
    // `changes` moves on every change; the counts alone can return to the same values (one
    // seller gone, another back) and keep a stale view.
    const fingerprint = `${status.changes}/${status.lastRefreshAt}/${status.peerCount}/${status.reachablePeerCount}`;
    const now = this.deps.clock();
    if (
      !this.index ||
      this.index.fingerprint !== fingerprint ||
      now - this.index.builtAt > INDEX_MAX_AGE_MS
    ) {
      this.index = {
        fingerprint,
        builtAt: now,
        value: OfferIndex.fromPeers(this.deps.directory.list()),
      };
      this.metrics.peers.set({ state: 'cached' }, status.peerCount);
      this.metrics.peers.set({ state: 'reachable' }, status.reachablePeerCount);
    }
    return this.index.value;
  }

  /** Forces the next `offers()` to rebuild. */
  invalidateOffers(): void {
    this.index = undefined;
  }
}
