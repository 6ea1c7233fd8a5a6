/**
 * Measured speed per (seller, model): time to first token and output tokens per second, as
 * exponentially weighted moving averages of the buyer's own traffic
 * (docs/decisions/150-routing-by-speed.md). Routing sorts by them on request; the catalog shows them.
 */
import type { OfferSpeed, SpeedSource } from '../catalog/index.js';
import type { PeerId } from '../identity/index.js';

/** Weight of the newest sample in each moving average. */
const ALPHA = 0.3;
/** Most (seller, model) pairs remembered; the oldest entry is dropped beyond it. */
const MAX_ENTRIES = 10_000;

/** One delivered answer's timing. */
export interface SpeedSample {
  /** From sending the request to the answer's head (first byte of a stream). */
  ttftMs: number;
  /** From sending the request to the answer's end. */
  totalMs: number;
  outputTokens: number;
}

function average(old: number | undefined, sample: number): number {
  return old === undefined ? sample : old + ALPHA * (sample - old);
}

export class SpeedTracker implements SpeedSource {
  private readonly entries = new Map<string, OfferSpeed>();

  record(peerId: PeerId, modelKey: string, sample: SpeedSample): void {
    if (!Number.isFinite(sample.ttftMs) || !Number.isFinite(sample.totalMs)) return;
    const key = `${peerId}|${modelKey}`;
    const old = this.entries.get(key);
    const next: OfferSpeed = {
      ttftMs: average(old?.ttftMs, Math.max(0, sample.ttftMs)),
      samples: (old?.samples ?? 0) + 1,
    };
    // Throughput needs output: an answer without tokens says nothing about generation speed.
    if (sample.outputTokens > 0) {
      const tps = (sample.outputTokens * 1000) / Math.max(1, sample.totalMs);
      next.outputTokensPerSecond = average(old?.outputTokensPerSecond, tps);
    } else if (old?.outputTokensPerSecond !== undefined) {
      next.outputTokensPerSecond = old.outputTokensPerSecond;
    }
    this.entries.delete(key);
    this.entries.set(key, next);
    if (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  speed(peerId: PeerId, modelKey: string): OfferSpeed | undefined {
    return this.entries.get(`${peerId}|${modelKey}`);
  }
}
