/**
 * Recent failures per seller: a penalty that lowers the trust tie-break, and a cool-down after
 * consecutive failures that moves the seller to the end of the ranking.
 *
 * A failure is blamed on the connection (the seller could not be reached, or the connection
 * dropped before it answered) or on the seller's answer (an error status, a timeout, a cut or
 * malformed answer). A seller seen alive again (`connectionBack`: a new connection, a fresh
 * record) loses what its connection failures earned; what its answers earned stays
 * (docs/decisions/178-a-seller-that-is-back.md).
 */
import type { OfferHealth } from '../catalog/index.js';
import type { PeerId } from '../identity/index.js';

export interface HealthOptions {
  /** Failures older than this stop counting. */
  windowMs?: number;
  /** Trust points subtracted per recent failure. */
  penaltyPerFailure?: number;
  /** Consecutive failures that start a cool-down. */
  coolDownAfter?: number;
  coolDownMs?: number;
}

/** What a failure is blamed on. */
export type FailureCause = 'connection' | 'answer';

interface CauseHealth {
  /** Times of the recent failures. */
  failures: number[];
  /** Failures of this cause in the current run of consecutive failures. */
  consecutive: number;
  /** End of the cool-down this cause earned. */
  coolUntil: number;
}

interface PeerHealth {
  connection: CauseHealth;
  answer: CauseHealth;
  totalFailures: number;
}

const fresh = (): CauseHealth => ({ failures: [], consecutive: 0, coolUntil: 0 });

/** Tracks seller failures against an injected clock. */
export class HealthTracker implements OfferHealth {
  private readonly peers = new Map<PeerId, PeerHealth>();
  private readonly windowMs: number;
  private readonly penaltyPerFailure: number;
  private readonly coolDownAfter: number;
  private readonly coolDownMs: number;

  constructor(
    private readonly now: () => number = Date.now,
    options: HealthOptions = {},
  ) {
    this.windowMs = options.windowMs ?? 5 * 60_000;
    this.penaltyPerFailure = options.penaltyPerFailure ?? 10;
    this.coolDownAfter = options.coolDownAfter ?? 3;
    this.coolDownMs = options.coolDownMs ?? 30_000;
  }

  recordFailure(peerId: PeerId, cause: FailureCause = 'answer'): void {
    const now = this.now();
    let health = this.peers.get(peerId);
    if (!health) {
      health = { connection: fresh(), answer: fresh(), totalFailures: 0 };
      this.peers.set(peerId, health);
    }
    const own = health[cause];
    own.failures = own.failures.filter((at) => now - at < this.windowMs);
    own.failures.push(now);
    own.consecutive++;
    health.totalFailures++;
    if (health.connection.consecutive + health.answer.consecutive >= this.coolDownAfter) {
      // A run with any answer failure in it is the answers' doing: it outlives a reconnection.
      const blamed = health.answer.consecutive > 0 ? health.answer : health.connection;
      blamed.coolUntil = now + this.coolDownMs;
    }
  }

  recordSuccess(peerId: PeerId): void {
    const health = this.peers.get(peerId);
    if (health) {
      for (const cause of [health.connection, health.answer]) {
        cause.consecutive = 0;
        cause.coolUntil = 0;
      }
    }
  }

  /** The seller is reachable again: its connection failures stop counting. */
  connectionBack(peerId: PeerId): void {
    const health = this.peers.get(peerId);
    if (health) health.connection = fresh();
  }

  penalty(peerId: PeerId): number {
    const health = this.peers.get(peerId);
    if (!health) return 0;
    const now = this.now();
    const recent = (cause: CauseHealth) =>
      cause.failures.filter((at) => now - at < this.windowMs).length;
    return (recent(health.connection) + recent(health.answer)) * this.penaltyPerFailure;
  }

  coolingDown(peerId: PeerId): boolean {
    const health = this.peers.get(peerId);
    if (health === undefined) return false;
    const now = this.now();
    return now < health.connection.coolUntil || now < health.answer.coolUntil;
  }

  /** Failures since start, per seller (for /metrics and /_svc/peers). */
  totalFailures(peerId: PeerId): number {
    return this.peers.get(peerId)?.totalFailures ?? 0;
  }
}
