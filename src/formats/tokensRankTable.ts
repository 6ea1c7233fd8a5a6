/**
 * Merge ranks keyed by a token's bytes (a latin1 string, one char per byte), in typed arrays.
 * A `Map<string, number>` of o200k_base's 199,998 tokens held ~13 MiB (a 7 MiB hash table in
 * large-object space plus a heap string per key); this holds the same in ~6 MB: every token's
 * bytes back to back, its rank and hash, and an open-addressing table of token numbers
 * (docs/decisions/155-buyer-memory-with-many-peers.md). It offers the part of Map's interface
 * counting uses, with Map's semantics (a key set twice keeps its place and takes the new rank;
 * iteration in insertion order).
 */

/** FNV-1a of the string's char codes (bytes, for latin1 keys). */
function hashOf(key: string, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash | 0;
}

export class RankTable {
  /** Number of tokens. */
  size = 0;
  private bytes: Uint8Array;
  /** Token t's bytes are bytes[starts[t], starts[t + 1]). */
  private starts: Int32Array;
  private ranks: Int32Array;
  private hashes: Int32Array;
  /** Token number + 1 per slot, 0 for an empty slot; at most half full. */
  private slots: Int32Array;

  /**
   * Sized for `tokens` tokens of `bytes` bytes in all: a table filled within its size allocates
   * nothing more (it grows, by doubling, past it).
   */
  constructor(tokens = 1024, bytes = tokens * 8) {
    this.bytes = new Uint8Array(Math.max(bytes, 16));
    this.starts = new Int32Array(tokens + 2);
    this.ranks = new Int32Array(tokens + 1);
    this.hashes = new Int32Array(tokens + 1);
    this.slots = new Int32Array(2 ** Math.ceil(Math.log2(Math.max(tokens, 8) * 2)));
  }

  /** Rank of the token whose bytes are `key` (latin1), if any. */
  get(key: string): number | undefined {
    const token = this.find(key, hashOf(key, 0, key.length));
    return token < 0 ? undefined : (this.ranks[token] as number);
  }

  has(key: string): boolean {
    return this.find(key, hashOf(key, 0, key.length)) >= 0;
  }

  /** Adds a token (or gives an existing one a new rank). */
  set(key: string, rank: number): this {
    const hash = hashOf(key, 0, key.length);
    const existing = this.find(key, hash);
    if (existing >= 0) {
      this.ranks[existing] = rank;
      return this;
    }
    const token = this.size;
    if (token >= this.ranks.length) this.growTokens();
    const start = this.starts[token] as number;
    if (start + key.length > this.bytes.length) {
      const bytes = new Uint8Array(Math.max(this.bytes.length * 2, start + key.length));
      bytes.set(this.bytes);
      this.bytes = bytes;
    }
    for (let i = 0; i < key.length; i++) this.bytes[start + i] = key.charCodeAt(i);
    this.starts[token + 1] = start + key.length;
    this.ranks[token] = rank;
    this.hashes[token] = hash;
    this.size = token + 1;
    if (this.size * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(token, hash);
    return this;
  }

  *entries(): Generator<[string, number]> {
    for (let token = 0; token < this.size; token++)
      yield [this.keyOf(token), this.ranks[token] as number];
  }

  *keys(): Generator<string> {
    for (let token = 0; token < this.size; token++) yield this.keyOf(token);
  }

  *values(): Generator<number> {
    for (let token = 0; token < this.size; token++) yield this.ranks[token] as number;
  }

  [Symbol.iterator](): Generator<[string, number]> {
    return this.entries();
  }

  private keyOf(token: number): string {
    const from = this.starts[token] as number;
    const to = this.starts[token + 1] as number;
    return String.fromCharCode(...this.bytes.subarray(from, to));
  }

  /** Token number of `key`, or -1. */
  private find(key: string, hash: number): number {
    const { slots, hashes, starts, bytes } = this;
    const mask = slots.length - 1;
    const length = key.length;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = slots[slot] as number;
      if (entry === 0) return -1;
      const token = entry - 1;
      if (hashes[token] !== hash) continue;
      const start = starts[token] as number;
      if ((starts[token + 1] as number) - start !== length) continue;
      let i = 0;
      while (i < length && bytes[start + i] === key.charCodeAt(i)) i++;
      if (i === length) return token;
    }
  }

  private place(token: number, hash: number): void {
    const { slots } = this;
    const mask = slots.length - 1;
    let slot = hash & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = token + 1;
  }

  private rehash(capacity: number): void {
    this.slots = new Int32Array(capacity);
    for (let token = 0; token < this.size; token++) this.place(token, this.hashes[token] as number);
  }

  private growTokens(): void {
    const capacity = this.ranks.length * 2;
    const grow = (array: Int32Array, length: number) => {
      const grown = new Int32Array(length);
      grown.set(array);
      return grown;
    };
    this.starts = grow(this.starts, capacity + 1);
    this.ranks = grow(this.ranks, capacity);
    this.hashes = grow(this.hashes, capacity);
  }
}
