/**
 * Token counts of short pre-tokens, remembered (decision 156). Prompts differ per request, so a
 * whole-text cache never hits on a gateway, but prose and code repeat their pre-tokens (" the",
 * " function", "    "): merging each one again was a fifth of the gateway's CPU per request.
 *
 * One direct-mapped table in one typed array: a slot per hash, a newer piece replaces an older
 * one. Memory is fixed (512 KB, allocated on first use); a slot (hash, length and count, the
 * characters) is 32 bytes, so a lookup reads one cache line. A count is exact: a pre-token's count
 * depends only on its characters and the tables, and the table is emptied when counting switches
 * to other tables. Text whose pieces rarely repeat (random letters, base64) would only pay for
 * lookups and push useful pieces out, so after a window of mostly misses the cache is left alone
 * for a while.
 */

/** Longest pre-token remembered, in UTF-16 code units (" reputation" is 11); from 3 (decision 156). */
export const PIECE_CACHE_CHARS = 12;
const SLOT_BITS = 14;
/** Int32s per slot: hash, length | count << 8, then two characters per int. */
const SLOT_INTS = 8;
/** Lookups per window, and pieces not looked up after a window with fewer than half hits. */
const WINDOW = 256;
const SKIP = 16_384;

export class PieceCache {
  private slots: Int32Array | null = null;
  // The tables the counts were made with (their identity only: another set empties the cache).
  private tables: object | null = null;
  // Where the last missed piece goes once its count is known (`remember`).
  private missAt = -1;
  private missHash = 0;
  private lookups = 0;
  private hits = 0;
  private skipLeft = 0;

  /**
   * Count of the piece `text[start, start + length)` (1 to PIECE_CACHE_CHARS characters) under
   * `tables`, or -1 when it is not remembered or the cache is resting; a miss may be followed by
   * `remember` with the count. The piece is read in place: a lookup makes no string.
   */
  get(text: string, start: number, length: number, tables: object): number {
    if (this.skipLeft > 0) {
      this.skipLeft--;
      this.missAt = -1;
      return -1;
    }
    if (++this.lookups === WINDOW) {
      if (this.hits < WINDOW / 2) this.skipLeft = SKIP;
      this.lookups = 0;
      this.hits = 0;
    }
    if (tables !== this.tables || this.slots === null) {
      this.slots = new Int32Array((1 << SLOT_BITS) * SLOT_INTS);
      this.tables = tables;
    }
    const slots = this.slots;
    // FNV-1a over the UTF-16 code units.
    let hash = 0x811c9dc5;
    for (let i = 0; i < length; i++)
      hash = Math.imul(hash ^ text.charCodeAt(start + i), 0x01000193);
    const at = (Math.imul(hash, 0x9e3779b1) >>> (32 - SLOT_BITS)) * SLOT_INTS;
    const meta = slots[at + 1] as number;
    if (slots[at] === hash && (meta & 0xff) === length) {
      let i = 0;
      for (; i < length; i += 2) {
        const pair =
          text.charCodeAt(start + i) | (i + 1 < length ? text.charCodeAt(start + i + 1) << 16 : 0);
        if (slots[at + 2 + (i >> 1)] !== pair) break;
      }
      if (i >= length) {
        this.hits++;
        return meta >>> 8;
      }
    }
    this.missAt = at;
    this.missHash = hash;
    return -1;
  }

  /** Remembers the count of the piece `get` just missed (the same `text`, `start`, `length`). */
  remember(text: string, start: number, length: number, count: number): void {
    const at = this.missAt;
    const slots = this.slots;
    if (at < 0 || slots === null) return;
    slots[at] = this.missHash;
    slots[at + 1] = length | (count << 8);
    for (let i = 0; i < length; i += 2)
      slots[at + 2 + (i >> 1)] =
        text.charCodeAt(start + i) | (i + 1 < length ? text.charCodeAt(start + i + 1) << 16 : 0);
    this.missAt = -1;
  }
}

/** The process's one cache, shared by every count. */
export const pieceCache = new PieceCache();
