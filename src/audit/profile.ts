/**
 * The buyer's own traffic, as audits copy it (docs/decisions/164-...): the shapes of recent
 * requests (src/audit/shape.ts: no words, only structure, parameters, headers and lengths) and
 * the gaps between requests, per identity and model. Kept in memory only: after a restart the
 * profile fills again from new traffic. Until the buyer has a shape of its own, audits use the
 * built-in shapes of common clients (src/audit/builtinShapes.ts).
 */
import { builtinShapes } from './builtinShapes.js';
import type { RequestShape } from './shape.js';

/** Shapes and gaps kept per key (the most recent ones: traffic changes). */
const CAPACITY = 64;
/** Keys kept at most (identity × model pairs); the least recently used goes first. */
const MAX_KEYS = 512;
/** Once this many shapes are kept for a key, one request in SAMPLE_EVERY is shaped. */
const SAMPLE_AFTER = 16;
const SAMPLE_EVERY = 4;
/** Gaps longer than this are idle time, not the pace of traffic (not kept). */
const MAX_GAP_MS = 15 * 60_000;
/** Delay of an audit request when the buyer has too few gaps of its own (mean of an exponential). */
const DEFAULT_GAP_MS = 20_000;
/** Gaps needed before the buyer's own are used. */
const MIN_GAPS = 4;

class Ring<T> {
  private readonly items: T[] = [];
  private next = 0;
  seen = 0;
  push(item: T): void {
    this.seen++;
    if (this.items.length < CAPACITY) this.items.push(item);
    else this.items[this.next] = item;
    this.next = (this.next + 1) % CAPACITY;
  }
  get size(): number {
    return this.items.length;
  }
  pick(random: () => number): T | undefined {
    return this.items[Math.floor(random() * this.items.length)];
  }
}

interface Traffic {
  shapes: Ring<RequestShape>;
  gaps: Ring<number>;
  lastArrival: number | undefined;
  /** The gap before the last request (kept with its shape, if it is shaped). */
  lastGap: number | undefined;
  /** How long before the last request reached the buyer its id was made, if not by the buyer. */
  lastIdAgeMs: number | undefined;
}

const keyOf = (identity: string, modelKey: string) => `${identity}\u0000${modelKey}`;
const ANY_MODEL = '\u0000any';

export class TrafficProfile {
  private readonly traffic = new Map<string, Traffic>();
  private readonly builtin: RequestShape[];

  constructor(private readonly random: () => number) {
    this.builtin = builtinShapes();
  }

  private entry(key: string): Traffic {
    let entry = this.traffic.get(key);
    if (entry) {
      this.traffic.delete(key);
    } else {
      entry = {
        shapes: new Ring(),
        gaps: new Ring(),
        lastArrival: undefined,
        lastGap: undefined,
        lastIdAgeMs: undefined,
      };
      if (this.traffic.size >= MAX_KEYS) {
        const oldest = this.traffic.keys().next().value;
        if (oldest !== undefined) this.traffic.delete(oldest);
      }
    }
    this.traffic.set(key, entry);
    return entry;
  }

  /**
   * A request of `identity` for `modelKey` arrived at `at` (ms): its gap to the last one, and
   * how long before it arrived its id was made (`idAgeMs`, a gateway's id).
   */
  noteArrival(identity: string, modelKey: string, at: number, idAgeMs?: number): void {
    for (const key of [keyOf(identity, modelKey), keyOf(identity, ANY_MODEL)]) {
      const entry = this.entry(key);
      entry.lastGap = undefined;
      entry.lastIdAgeMs = idAgeMs;
      if (entry.lastArrival !== undefined) {
        const gap = at - entry.lastArrival;
        if (gap >= 0 && gap <= MAX_GAP_MS) {
          entry.gaps.push(gap);
          entry.lastGap = gap;
        }
      }
      entry.lastArrival = at;
    }
  }

  /** True when the next request of this key should be shaped (cheap: no shape is built). */
  wantsShape(identity: string, modelKey: string): boolean {
    const entry = this.traffic.get(keyOf(identity, modelKey));
    if (!entry || entry.shapes.size < SAMPLE_AFTER) return true;
    return this.random() * SAMPLE_EVERY < 1;
  }

  /**
   * Keeps the shape of one of the buyer's requests (its last one of the model), with the gap
   * that came before it: a probe copying the shape waits as long, so a kind of client's probes
   * keep that client's pace.
   */
  noteShape(modelKey: string, shape: RequestShape): void {
    const entry = this.entry(keyOf(shape.identity, modelKey));
    const kept = entry.lastGap === undefined ? shape : { ...shape, gapMs: entry.lastGap };
    entry.shapes.push(kept);
    this.entry(keyOf(shape.identity, ANY_MODEL)).shapes.push(kept);
  }

  /**
   * A shape to copy for an audit of `modelKey` paid by `identity`: one of its own requests to
   * that model, else to any model, else a built-in one (with the identity set, and the id age of
   * the identity's last request: docs/decisions/223-key-order-and-id-time.md).
   */
  shapeFor(identity: string, modelKey: string): RequestShape {
    for (const key of [keyOf(identity, modelKey), keyOf(identity, ANY_MODEL)]) {
      const shape = this.traffic.get(key)?.shapes.pick(this.random);
      if (shape) return shape;
    }
    const builtin = this.builtin[Math.floor(this.random() * this.builtin.length)]!;
    const idAgeMs = this.traffic.get(keyOf(identity, modelKey))?.lastIdAgeMs;
    return { ...builtin, identity, ...(idAgeMs !== undefined ? { idAgeMs } : {}) };
  }

  /** A delay drawn from the gaps between this identity's requests to the model (ms). */
  gapFor(identity: string, modelKey: string): number {
    for (const key of [keyOf(identity, modelKey), keyOf(identity, ANY_MODEL)]) {
      const gaps = this.traffic.get(key)?.gaps;
      if (gaps && gaps.size >= MIN_GAPS) return gaps.pick(this.random)!;
    }
    return Math.round(-Math.log(1 - this.random()) * DEFAULT_GAP_MS);
  }

  /** When this identity's last request to the model arrived (ms), if one did. */
  lastArrival(identity: string, modelKey: string): number | undefined {
    return this.traffic.get(keyOf(identity, modelKey))?.lastArrival;
  }

  /** How many of this identity's shapes for the model are kept (`/_svc/audits`, tests). */
  shapes(identity: string, modelKey: string): number {
    return this.traffic.get(keyOf(identity, modelKey))?.shapes.size ?? 0;
  }
}
