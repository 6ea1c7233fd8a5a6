/**
 * When to look again at a peer marked unreachable (docs/decisions/178-a-seller-that-is-back.md):
 * soon at first, since a seller that restarts is back within seconds, then less and less often,
 * never less often than the background refresh would anyway. One timer per peer being rechecked.
 */
import type { PeerId } from '../identity/index.js';

export interface RecheckOptions {
  /** Wait before the first recheck after a peer is marked unreachable. */
  firstMs?: number;
  /** Longest wait between two rechecks. */
  maxMs?: number;
  /** Each wait is this many times the previous one. */
  factor?: number;
}

interface Pending {
  timer: NodeJS.Timeout | undefined;
  waitMs: number;
}

/** Schedules rechecks of unreachable peers with a growing, jittered wait. */
export class Rechecks {
  private readonly pending = new Map<PeerId, Pending>();
  private readonly firstMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private stopped = false;

  constructor(
    private readonly recheck: (peerId: PeerId) => void,
    options: RecheckOptions = {},
  ) {
    this.firstMs = options.firstMs ?? 500;
    this.maxMs = options.maxMs ?? 60_000;
    this.factor = options.factor ?? 1.5;
  }

  /** Schedules the next recheck of `peerId` unless one is already waiting. */
  schedule(peerId: PeerId): void {
    if (this.stopped) return;
    const pending = this.pending.get(peerId) ?? { timer: undefined, waitMs: 0 };
    if (pending.timer !== undefined) return;
    pending.waitMs =
      pending.waitMs === 0 ? this.firstMs : Math.min(this.maxMs, pending.waitMs * this.factor);
    // ±20 %: peers marked together (a crowd behind one dead relay) are not rechecked together.
    const delay = pending.waitMs * (0.8 + 0.4 * Math.random());
    pending.timer = setTimeout(() => {
      pending.timer = undefined;
      this.recheck(peerId);
    }, delay);
    pending.timer.unref();
    this.pending.set(peerId, pending);
  }

  /** The peer is back (or gone): no more rechecks, and the next mark starts from the first wait. */
  cancel(peerId: PeerId): void {
    const pending = this.pending.get(peerId);
    if (pending?.timer !== undefined) clearTimeout(pending.timer);
    this.pending.delete(peerId);
  }

  stop(): void {
    this.stopped = true;
    for (const peerId of [...this.pending.keys()]) this.cancel(peerId);
  }
}
