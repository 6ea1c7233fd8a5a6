/**
 * Recent failures per seller: a penalty that lowers the trust tie-break, and a cool-down after
 * consecutive failures that moves the seller to the end of the ranking.
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

interface PeerHealth {
  failures: number[];
  consecutive: number;
  coolUntil: number;
  totalFailures: number;
}

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

  recordFailure(peerId: PeerId): void {
    const now = this.now();
    const health = this.peers.get(peerId) ?? {
      failures: [],
      consecutive: 0,
      coolUntil: 0,
      totalFailures: 0,
    };
    health.failures = health.failures.filter((at) => now - at < this.windowMs);
    health.failures.push(now);
    health.consecutive++;
    health.totalFailures++;
    if (health.consecutive >= this.coolDownAfter) health.coolUntil = now + this.coolDownMs;
    this.peers.set(peerId, health);
  }

  recordSuccess(peerId: PeerId): void {
    const health = this.peers.get(peerId);
    if (health) {
      health.consecutive = 0;
      health.coolUntil = 0;
    }
  }

  penalty(peerId: PeerId): number {
    const health = this.peers.get(peerId);
    if (!health) return 0;
    const now = this.now();
    return health.failures.filter((at) => now - at < this.windowMs).length * this.penaltyPerFailure;
  }

  coolingDown(peerId: PeerId): boolean {
    const health = this.peers.get(peerId);
    return health !== undefined && this.now() < health.coolUntil;
  }

  /** Failures since start, per seller (for /metrics and /_svc/peers). */
  totalFailures(peerId: PeerId): number {
    return this.peers.get(peerId)?.totalFailures ?? 0;
  }
}
