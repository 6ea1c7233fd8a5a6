/**
 * Merges by integer ids (decision 100): for every token whose bytes split into two tokens, the
 * rank of the two merged, in an open-addressing table keyed by the two parts' ranks (446,189
 * splits of o200k_base's 199,998 tokens; 12 MB). BPE then merges without substrings or string
 * hashing, and a pair absent from the table is known not to merge. Built once per rank map, a
 * bounded number of tokens per step so it can yield.
 */
import type { RankTable } from './tokensRankTable.js';

/** Bits of a rank: `bpeCount` packs a rank and a position (10 bits) into one int32. */
export const MAX_RANK_BITS = 21;
const MAX_RANK = 2 ** MAX_RANK_BITS - 1;

/** Integer views of one rank map, as `bpeCount` reads them. */
export class PairIndex {
  /** Rank of each single byte (-1 if it is not a token), once complete. */
  readonly byteRank = new Int32Array(256).fill(-1);
  /** Rank of each two-byte token by (first byte << 8 | second byte), else -1, once complete. */
  readonly twoByte = new Int32Array(65_536).fill(-1);
  private left: Int32Array;
  private right: Int32Array;
  private merged: Int32Array;
  private shift: number;
  private size = 0;
  /** Whether every split is indexed; until then a pair's absence means nothing. */
  complete = false;
  /** Whether merging each token's own bytes is known to end in that token (checked after). */
  everyTokenMerges = false;

  constructor(tokens: number) {
    // At most ~2.3 splits per token in o200k_base: a quarter full or less, short probes.
    const bits = Math.max(10, Math.ceil(Math.log2(Math.max(1, tokens) * 4)));
    this.shift = 32 - bits;
    this.left = new Int32Array(1 << bits).fill(-1);
    this.right = new Int32Array(1 << bits);
    this.merged = new Int32Array(1 << bits);
  }

  /** Rank of the parts of ranks `left` and `right` merged, or -1 when that is no token. */
  rankOf(left: number, right: number): number {
    const mask = this.left.length - 1;
    let slot = Math.imul(Math.imul(left, 0x9e3779b1) ^ right, 0x85ebca6b) >>> this.shift;
    for (;;) {
      const at = this.left[slot] as number;
      if (at === -1) return -1;
      if (at === left && this.right[slot] === right) return this.merged[slot] as number;
      slot = (slot + 1) & mask;
    }
  }

  add(left: number, right: number, rank: number): void {
    if ((this.size + 1) * 2 > this.left.length) this.grow();
    const mask = this.left.length - 1;
    let slot = Math.imul(Math.imul(left, 0x9e3779b1) ^ right, 0x85ebca6b) >>> this.shift;
    for (;;) {
      const at = this.left[slot] as number;
      if (at === -1) break;
      if (at === left && this.right[slot] === right) return;
      slot = (slot + 1) & mask;
    }
    this.left[slot] = left;
    this.right[slot] = right;
    this.merged[slot] = rank;
    this.size++;
  }

  private grow(): void {
    const { left, right, merged } = this;
    const length = left.length * 2;
    this.shift--;
    this.left = new Int32Array(length).fill(-1);
    this.right = new Int32Array(length);
    this.merged = new Int32Array(length);
    this.size = 0;
    for (let slot = 0; slot < left.length; slot++) {
      const at = left[slot] as number;
      if (at !== -1) this.add(at, right[slot] as number, merged[slot] as number);
    }
  }
}

/**
 * Fills a `PairIndex` from a rank map (keys: latin1 byte strings) a few tokens per step: each
 * split of a token whose two sides are tokens too.
 */
export class PairIndexBuilder {
  readonly index: PairIndex;
  private readonly entries: Iterator<[string, number]>;

  constructor(private readonly ranks: RankTable) {
    for (const rank of ranks.values())
      if (rank > MAX_RANK) throw new RangeError('PairIndexBuilder: rank beyond the heap key range');
    this.index = new PairIndex(ranks.size);
    this.entries = ranks.entries();
  }

  /** Indexes up to `tokens` more tokens; true once every token is indexed. */
  step(tokens: number): boolean {
    const { ranks, index } = this;
    for (let done = 0; done < tokens; done++) {
      const next = this.entries.next();
      if (next.done) {
        index.complete = true;
        return true;
      }
      const [bytes, rank] = next.value;
      if (bytes.length === 1) index.byteRank[bytes.charCodeAt(0)] = rank;
      else if (bytes.length === 2)
        index.twoByte[(bytes.charCodeAt(0) << 8) | bytes.charCodeAt(1)] = rank;
      for (let split = 1; split < bytes.length; split++) {
        const left = ranks.get(bytes.slice(0, split));
        if (left === undefined) continue;
        const right = ranks.get(bytes.slice(split));
        if (right !== undefined) index.add(left, right, rank);
      }
    }
    return false;
  }
}
