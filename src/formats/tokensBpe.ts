/**
 * o200k_base token counting in time linear in the text's length, for any text (decision 100).
 * js-tiktoken's merge loop is quadratic or worse in the length of one pre-token (10,000 × `x`
 * took 6.5 s); here a pre-token merges with a heap (O(n log n), same merges as tiktoken, ties
 * to the leftmost pair; a merge is looked up by the two parts' ranks in `tokensPairs.ts`), pre-tokens
 * longer than BPE_CHUNK_BYTES are merged in chunks, and the pre-tokenizing regex runs over windows
 * cut where a pre-token boundary is certain. A `TokenCounter` does its work in steps, so a caller
 * can yield between them.
 */

import { MAX_RANK_BITS, type PairIndex } from './tokensPairs.js';
import { PIECE_CACHE_CHARS, pieceCache } from './tokensPieceCache.js';
import type { RankTable } from './tokensRankTable.js';

/** Longest pre-token merged in one piece; a longer one is merged in chunks of this size. */
export const BPE_CHUNK_BYTES = 512;
/** Characters the pre-tokenizing regex sees at once. */
export const REGEX_WINDOW_CHARS = 16_384;

/**
 * What counting needs of an encoding: merge ranks keyed by latin1 byte strings, the same ranks
 * by integer pairs, the split regex.
 */
export interface BpeTables {
  ranks: RankTable;
  pairs: PairIndex;
  pattern: string;
  specialTokens: string[];
}

const HEAP_CAPACITY = BPE_CHUNK_BYTES * 3 + 8;
// Heap keys are rank << POSITION_BITS | start, ordering by rank, then leftmost (tiktoken's
// choice on ties), in one int32: ranks have at most MAX_RANK_BITS bits (checked by the index).
const POSITION_BITS = 31 - MAX_RANK_BITS;
const POSITION_MASK = (1 << POSITION_BITS) - 1;
const heap = new Int32Array(HEAP_CAPACITY);
const nextOf = new Int32Array(BPE_CHUNK_BYTES + 1);
const prevOf = new Int32Array(BPE_CHUNK_BYTES + 1);
// Rank of the part starting at i (every part is a token), and of its merge with the next part.
const partRank = new Int32Array(BPE_CHUNK_BYTES + 1);
const pairRank = new Int32Array(BPE_CHUNK_BYTES + 1);

function heapPush(size: number, key: number): number {
  let i = size;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const up = heap[parent] as number;
    if (up <= key) break;
    heap[i] = up;
    i = parent;
  }
  heap[i] = key;
  return size + 1;
}

/** Moves `key` down from `at` into place in a heap of `size` entries. */
function siftDown(at: number, key: number, size: number): void {
  let i = at;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= size) break;
    const right = left + 1;
    const child = right < size && (heap[right] as number) < (heap[left] as number) ? right : left;
    const down = heap[child] as number;
    if (down >= key) break;
    heap[i] = down;
    i = child;
  }
  heap[i] = key;
}

function heapPop(size: number): number {
  const last = size - 1;
  siftDown(0, heap[last] as number, last);
  return last;
}

/**
 * Rank of the part starting at `from` merged with the part after it, or -1. The parts' bounds and
 * ranks are read from the linked list (nextOf, partRank) the merge loop keeps.
 */
function mergedRank(tables: BpeTables, bytes: string, from: number): number {
  const middle = nextOf[from] as number;
  const left = partRank[from] as number;
  const right = partRank[middle] as number;
  // Before the pair index is complete, or for a byte missing from the ranks (no id to look the
  // pair up by), the merged bytes are looked up.
  if (left < 0 || right < 0 || !tables.pairs.complete)
    return tables.ranks.get(bytes.slice(from, nextOf[middle] as number)) ?? -1;
  return tables.pairs.rankOf(left, right);
}

/**
 * Tokens of one byte string (latin1: one char per byte) of at most BPE_CHUNK_BYTES, merged as
 * tiktoken merges: repeatedly the adjacent pair of lowest rank, leftmost first.
 */
export function bpeCount(bytes: string, tables: BpeTables): number {
  const n = bytes.length;
  if (n <= 1) return n;
  if (n > BPE_CHUNK_BYTES) throw new RangeError('bpeCount: piece longer than BPE_CHUNK_BYTES');
  const parts = mergedParts(bytes, tables);
  // A piece that is a token is one token even where merging does not reach it (as in tiktoken);
  // asked only when merging left several parts, and not at all once every token is known to be
  // reached by merging its own bytes (o200k_base's are): hashing the piece cost more than merging.
  return parts > 1 && !tables.pairs.everyTokenMerges && tables.ranks.has(bytes) ? 1 : parts;
}

/** Parts 2 to BPE_CHUNK_BYTES bytes merge into, whether or not they are a token themselves. */
export function mergedParts(bytes: string, tables: BpeTables): number {
  const n = bytes.length;
  const { byteRank, twoByte, complete } = tables.pairs;
  let size = 0;
  let code = bytes.charCodeAt(0);
  for (let i = 0; i < n; i++) {
    nextOf[i] = i + 1;
    prevOf[i] = i - 1;
    partRank[i] = byteRank[code] as number;
    if (i + 1 < n) {
      const following = bytes.charCodeAt(i + 1);
      const rank = complete
        ? (twoByte[(code << 8) | following] as number)
        : (tables.ranks.get(bytes.slice(i, i + 2)) ?? -1);
      pairRank[i] = rank;
      if (rank >= 0) heap[size++] = (rank << POSITION_BITS) | i;
      code = following;
    }
  }
  pairRank[n - 1] = -1;
  nextOf[n] = -1;
  // Heapify in place (O(n)): the keys were written in position order.
  for (let i = (size >> 1) - 1; i >= 0; i--) siftDown(i, heap[i] as number, size);
  let parts = n;
  while (size > 0) {
    const key = heap[0] as number;
    size = heapPop(size);
    const start = key & POSITION_MASK;
    const rank = key >> POSITION_BITS;
    // Entries go stale when a neighbour merges; the current rank of each pair is in pairRank.
    if (pairRank[start] !== rank) continue;
    const right = nextOf[start] as number;
    const after = nextOf[right] as number;
    nextOf[start] = after;
    if (after < n) prevOf[after] = start;
    pairRank[right] = -1;
    partRank[start] = rank;
    parts--;
    if (after < n) {
      const merged = mergedRank(tables, bytes, start);
      pairRank[start] = merged;
      if (merged >= 0) size = heapPush(size, (merged << POSITION_BITS) | start);
    } else pairRank[start] = -1;
    const before = prevOf[start] as number;
    if (before >= 0) {
      const merged = mergedRank(tables, bytes, before);
      pairRank[before] = merged;
      if (merged >= 0) size = heapPush(size, (merged << POSITION_BITS) | before);
    }
  }
  return parts;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
const NON_ASCII = /[^\u0000-\u007f]/;

/** UTF-8 bytes of a pre-token as a latin1 string (ASCII, the common case, is already that). */
function bytesOf(piece: string): string {
  return NON_ASCII.test(piece) ? Buffer.from(piece, 'utf8').toString('latin1') : piece;
}

/** `bytesOf` for a short piece: a loop over its characters costs less than a regex call. */
function shortBytesOf(piece: string): string {
  for (let i = 0; i < piece.length; i++)
    if (piece.charCodeAt(i) >= 0x80) return Buffer.from(piece, 'utf8').toString('latin1');
  return piece;
}

function isWhitespace(code: number): boolean {
  return (
    code === 0x20 ||
    (code >= 0x09 && code <= 0x0d) ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff ||
    code === 0x85
  );
}

/**
 * End of the regex window starting at `from`: the last position before `limit` where a space
 * follows a non-space (no pre-token spans it, and no match before it looks past it), else
 * `limit` itself (a whitespace-free run is cut there, as long pre-tokens are cut into chunks),
 * never between the halves of a surrogate pair.
 */
function windowEnd(text: string, from: number, limit: number, hardEnd: number): number {
  if (limit >= hardEnd) return hardEnd;
  for (let i = limit; i > from + 1; i--) {
    if (text.charCodeAt(i) === 0x20 && !isWhitespace(text.charCodeAt(i - 1))) return i;
  }
  const code = text.charCodeAt(limit - 1);
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
}

/** Counts one text in steps of bounded work (see `step`). */
export class TokenCounter {
  private readonly special: RegExp | undefined;
  private readonly split: RegExp;
  // The same pattern anchored at its lastIndex: `test` finds the pre-token starting exactly at the
  // cursor without building a match array or its string (most of a count's garbage otherwise).
  private readonly splitHere: RegExp;
  private segmentEnd = 0;
  private cursor = 0;
  private window = '';
  private windowStart = 0;
  // A pre-token longer than one chunk, merged chunk by chunk across steps.
  private longPiece = '';
  private longPieceAt = 0;
  /** Tokens counted so far (the total once `done`). */
  tokens = 0;
  done = false;

  constructor(
    private readonly text: string,
    private readonly tables: BpeTables,
  ) {
    ({ split: this.split, splitHere: this.splitHere, special: this.special } = patterns(tables));
    this.nextSegment();
  }

  /** Ordinary text up to the next special token (counted as one token, as js-tiktoken's 'all'). */
  private nextSegment(): void {
    if (this.cursor >= this.text.length) {
      this.done = true;
      return;
    }
    let end = this.text.length;
    if (this.special) {
      this.special.lastIndex = this.cursor;
      const match = this.special.exec(this.text);
      if (match) end = match.index;
    }
    this.segmentEnd = end;
    this.window = '';
    this.windowStart = this.cursor;
  }

  /** Counts about `budgetChars` more characters; returns true when the whole text is counted. */
  step(budgetChars: number): boolean {
    let spent = 0;
    while (!this.done && spent < budgetChars) {
      if (this.longPieceAt < this.longPiece.length) {
        const chunk = this.longPiece.slice(this.longPieceAt, this.longPieceAt + BPE_CHUNK_BYTES);
        this.tokens += bpeCount(chunk, this.tables);
        this.longPieceAt += BPE_CHUNK_BYTES;
        spent += chunk.length;
        continue;
      }
      if (this.cursor >= this.segmentEnd) {
        if (this.segmentEnd < this.text.length) {
          // A special token sits here.
          this.special!.lastIndex = this.segmentEnd;
          const match = this.special!.exec(this.text);
          this.tokens++;
          this.cursor = this.segmentEnd + (match?.[0].length ?? 0);
        }
        this.nextSegment();
        continue;
      }
      if (this.cursor >= this.windowStart + this.window.length) {
        const end = windowEnd(
          this.text,
          this.cursor,
          this.cursor + REGEX_WINDOW_CHARS,
          this.segmentEnd,
        );
        this.window = this.text.slice(this.cursor, end);
        this.windowStart = this.cursor;
      }
      const window = this.window;
      const at = this.cursor - this.windowStart;
      this.splitHere.lastIndex = at;
      let start = at;
      let end = this.splitHere.test(window) ? this.splitHere.lastIndex : at;
      if (end === at) {
        // No pre-token starts here (never in o200k_base): the next one, as a global search finds it.
        const match = this.nextMatch(window, at);
        if (!match) {
          // Only characters no alternative matches: skip the window.
          spent += this.windowStart + window.length - this.cursor;
          this.cursor = this.windowStart + window.length;
          continue;
        }
        start = match.index;
        end = start + match[0].length;
      }
      const length = end - start;
      if (length <= PIECE_CACHE_CHARS) {
        this.tokens += this.countShort(window, start, length);
        spent += length;
        this.cursor = this.windowStart + end;
        continue;
      }
      const bytes = bytesOf(window.slice(start, end));
      if (bytes.length > BPE_CHUNK_BYTES) {
        this.longPiece = bytes;
        this.longPieceAt = 0;
      } else {
        this.tokens += bpeCount(bytes, this.tables);
        spent += length;
      }
      this.cursor = this.windowStart + end;
    }
    return this.done;
  }

  /**
   * The first non-empty pre-token at or after `from`, as the global regex finds it (an empty
   * match moves one character on), or null when none is left in the window.
   */
  private nextMatch(window: string, from: number): RegExpExecArray | null {
    this.split.lastIndex = from;
    for (;;) {
      const match = this.split.exec(window);
      if (!match || match[0].length > 0) return match;
      this.split.lastIndex++;
    }
  }

  /**
   * Tokens of the pre-token `text[start, start + length)`, at most PIECE_CACHE_CHARS characters:
   * one or two ASCII characters directly (a byte is a token; two are one token exactly when they
   * are a token), longer ones remembered (a hit makes no string).
   */
  private countShort(text: string, start: number, length: number): number {
    const first = text.charCodeAt(start);
    if (length === 1 && first < 0x80) return 1;
    if (length === 2 && first < 0x80 && text.charCodeAt(start + 1) < 0x80) {
      const { pairs, ranks } = this.tables;
      if (!pairs.complete) return ranks.has(text.slice(start, start + 2)) ? 1 : 2;
      return (pairs.twoByte[(first << 8) | text.charCodeAt(start + 1)] as number) >= 0 ? 1 : 2;
    }
    let count = pieceCache.get(text, start, length, this.tables);
    if (count < 0) {
      count = bpeCount(shortBytesOf(text.slice(start, start + length)), this.tables);
      pieceCache.remember(text, start, length, count);
    }
    return count;
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$*+?.()|[\]{}]/g, '\\$&');
}

/** The regexes a count uses; shared by every counter of the same tables. */
interface Patterns {
  split: RegExp;
  splitHere: RegExp;
  special: RegExp | undefined;
}

// Per tables, built once (a counter is made per text, and a RegExp object costs its compilation).
// Sharing is safe: every use sets `lastIndex` first, within one synchronous step.
const patternsOf = new WeakMap<BpeTables, Patterns>();

function patterns(tables: BpeTables): Patterns {
  let found = patternsOf.get(tables);
  if (found === undefined) {
    const special = tables.specialTokens.map(escapeRegex).join('|');
    found = {
      split: new RegExp(tables.pattern, 'gu'),
      splitHere: new RegExp(tables.pattern, 'yu'),
      special: special ? new RegExp(special, 'g') : undefined,
    };
    patternsOf.set(tables, found);
  }
  return found;
}
