/**
 * The o200k_base tables counting needs, loaded once per process on first use (decision 098):
 * merge ranks keyed by the token's bytes as a latin1 string, the split regex, the special tokens.
 * The request path loads them in slices that yield (`tablesAsync`), so the first count after a
 * start does not block the event loop for the ~200 ms the 200,000-entry map takes (decision 100).
 */
import { createRequire } from 'node:module';
import { readTextFile } from '../config/index.js';
import { BPE_CHUNK_BYTES, type BpeTables, mergedParts } from './tokensBpe.js';
import { PairIndex, PairIndexBuilder } from './tokensPairs.js';
import { COUNT_SLICE_MS } from './tokensQueue.js';
import { RankTable } from './tokensRankTable.js';

interface RankFile {
  pat_str: string;
  special_tokens: Record<string, number>;
  bpe_ranks: string;
}

const require = createRequire(import.meta.url);
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64.length; i++) BASE64_VALUE[BASE64.charCodeAt(i)] = i;

/**
 * Builds the rank map of a js-tiktoken rank text ("<name> <first rank> <base64 token> ..." per
 * line) a bounded number of tokens at a time. js-tiktoken's own constructor also builds the
 * reverse map (for `decode`, which counting never calls) through a 200,000-key object: about
 * 140 MiB of RSS for o200k_base; this builds only the ranks.
 */
class RankMapBuilder {
  readonly ranks: RankTable;
  private readonly bytes = new Uint8Array(256);
  private line = 0;
  private lineEnd = -1;
  private cursor = 0;
  private rank = 0;

  constructor(private readonly text: string) {
    // Sized once (at most one token per space, 3 bytes per 4 base64 characters): a table that
    // grew would free multi-megabyte arrays, which raises glibc's mmap threshold (decision 155).
    let spaces = 0;
    for (let at = text.indexOf(' '); at >= 0; at = text.indexOf(' ', at + 1)) spaces++;
    this.ranks = new RankTable(spaces, Math.ceil((text.length * 3) / 4));
  }

  /** Adds up to `tokens` more entries; true once the whole text is read. */
  step(tokens: number): boolean {
    const { text } = this;
    let added = 0;
    while (added < tokens) {
      if (this.lineEnd < 0 && !this.startLine()) return true;
      if (this.cursor >= this.lineEnd) {
        this.line = this.lineEnd + 1;
        this.lineEnd = -1;
        continue;
      }
      let stop = text.indexOf(' ', this.cursor);
      if (stop < 0 || stop > this.lineEnd) stop = this.lineEnd;
      let length = 0;
      let acc = 0;
      let bits = 0;
      for (let i = this.cursor; i < stop; i++) {
        const value = BASE64_VALUE[text.charCodeAt(i)] ?? -1;
        if (value < 0) break; // '=' padding
        acc = ((acc << 6) | value) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
          bits -= 8;
          this.bytes[length++] = (acc >> bits) & 0xff;
        }
      }
      if (length > 0)
        this.ranks.set(String.fromCharCode(...this.bytes.subarray(0, length)), this.rank);
      this.rank++;
      this.cursor = stop + 1;
      added++;
    }
    return false;
  }

  /** Moves to the next line with tokens; false at the end of the text. */
  private startLine(): boolean {
    const { text } = this;
    while (this.line < text.length) {
      let end = text.indexOf('\n', this.line);
      if (end < 0) end = text.length;
      const nameEnd = text.indexOf(' ', this.line);
      if (nameEnd >= 0 && nameEnd < end) {
        let cursor = text.indexOf(' ', nameEnd + 1);
        if (cursor < 0 || cursor > end) cursor = end;
        this.rank = Number.parseInt(text.slice(nameEnd + 1, cursor), 10);
        this.cursor = cursor + 1;
        this.lineEnd = end;
        return true;
      }
      this.line = end + 1;
    }
    return false;
  }
}

/** The merge ranks of a js-tiktoken rank file (`tokens.test` checks it equals js-tiktoken's). */
export function rankMapOf(file: RankFile): RankTable {
  const builder = new RankMapBuilder(file.bpe_ranks);
  builder.step(Number.POSITIVE_INFINITY);
  return builder.ranks;
}

let tables: BpeTables | undefined;
let loading: Promise<BpeTables> | undefined;
let pairsIndexed: Promise<void> | undefined;

/**
 * The rank file's data, parsed from its text (`module.exports = {…JSON…};`) rather than loaded as
 * a module: a required module stays referenced (its parent's `children`, its compiled script), and
 * with it the 2.3 MB rank text, which is not needed once the map is built.
 */
function loadRankFile(): RankFile {
  const text = readTextFile(require.resolve('js-tiktoken/ranks/o200k_base'));
  return JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)) as RankFile;
}

/**
 * Runs `step` (a bounded amount of work, true when finished) in slices of COUNT_SLICE_MS that
 * yield; false if `stop()` turns true meanwhile. In the background, a slice waits on an
 * unreferenced timer: it does not keep an otherwise idle process alive (an unreferenced
 * `setImmediate` would not even wake the loop).
 */
async function inSlices(
  step: (count: number) => boolean,
  stop: () => boolean,
  background = false,
): Promise<boolean> {
  // A step of the pair index (several lookups per token) costs more than one of the rank map.
  const stepSize = background ? 200 : 1_000;
  for (;;) {
    // In the background, the first slice too waits for the next turn.
    if (background) await new Promise<void>((resolve) => setTimeout(resolve, 0).unref());
    const sliceStart = performance.now();
    let done = false;
    while (!done && performance.now() - sliceStart < COUNT_SLICE_MS) done = step(stepSize);
    if (done) return true;
    if (!background) await new Promise<void>((resolve) => setImmediate(resolve));
    if (stop()) return false;
  }
}

/**
 * The tables for a rank map, with an empty pair index: counting is exact without it (merges are
 * looked up by bytes). `indexPairs` fills the real one (12 MB) only when a long text asks for it,
 * so a process that counts only short texts never holds it (decision 100).
 */
function tablesOf(file: RankFile, ranks: RankTable): BpeTables {
  return {
    ranks,
    pairs: new PairIndex(0),
    pattern: file.pat_str,
    specialTokens: Object.keys(file.special_tokens),
  };
}

/**
 * Fills `built`'s pair index in slices in the background (then checks that every token is reached
 * by merging its own bytes), once per process; counting gets faster once it is complete.
 */
function indexPairs(built: BpeTables): Promise<void> {
  pairsIndexed ??= (async () => {
    const builder = new PairIndexBuilder(built.ranks);
    await inSlices(
      (count) => builder.step(count),
      () => false,
      true,
    );
    built.pairs = builder.index;
    const check = new MergeCheck(built);
    await inSlices(
      (count) => check.step(count),
      () => false,
      true,
    );
    built.pairs.everyTokenMerges = check.allMerge;
  })();
  return pairsIndexed;
}

/** Starts the pair index for a text of `chars` characters when it is long enough to pay off. */
export function indexPairsFor(chars: number, built: BpeTables): void {
  if (chars >= PAIR_INDEX_FROM_CHARS) void indexPairs(built);
}

/** Texts from this long start the pair index: below, counting by bytes is fast enough. */
const PAIR_INDEX_FROM_CHARS = 64 * 1024;

/** Whether merging each token's own bytes ends in that token, a few tokens per step. */
class MergeCheck {
  allMerge = true;
  private readonly entries: Iterator<string>;

  constructor(private readonly tables: BpeTables) {
    this.entries = tables.ranks.keys();
  }

  step(tokens: number): boolean {
    for (let done = 0; done < tokens; done++) {
      const next = this.entries.next();
      if (next.done) return true;
      const bytes = next.value;
      if (bytes.length < 2 || bytes.length > BPE_CHUNK_BYTES) continue;
      if (mergedParts(bytes, this.tables) !== 1) {
        this.allMerge = false;
        return true;
      }
    }
    return false;
  }
}

/** The tables, built now if need be (blocks for the build on first use). */
export function tablesNow(): BpeTables {
  if (!tables) {
    const file = loadRankFile();
    tables = tablesOf(file, rankMapOf(file));
  }
  return tables;
}

/** The tables, built in slices of COUNT_SLICE_MS that yield to the event loop. */
export function tablesAsync(): Promise<BpeTables> {
  if (tables) return Promise.resolve(tables);
  loading ??= (async () => {
    const file = loadRankFile();
    const builder = new RankMapBuilder(file.bpe_ranks);
    const built = await inSlices(
      (count) => builder.step(count),
      () => tables !== undefined,
    );
    if (built) tables ??= tablesOf(file, builder.ranks);
    return tablesNow();
  })();
  return loading;
}

/** Resolves once the tables and their pair index are complete (benches and tests wait). */
export async function tablesComplete(): Promise<BpeTables> {
  const complete = await tablesAsync();
  // The background slices do not keep the process alive; whoever waits for them does.
  const keepAlive = setInterval(() => undefined, 1_000);
  try {
    await indexPairs(complete);
  } finally {
    clearInterval(keepAlive);
  }
  return complete;
}
