/**
 * The gateway's price book (docs/decisions/169-reservations-priced-at-the-route.md) reads the
 * buyer's catalog: the first time before answering; then, once it is over 10 s old, in the
 * background while the last one answers, so that no request waits for the catalog; and before
 * answering again when the last one is over a minute old
 * (docs/decisions/212-gateway-time-before-forwarding.md).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonInPieces, poolTo } from '../../testing/index.js';
import { MAX_CATALOG_BYTES, PriceBook } from './priceBook.js';

const PEER = 'ab'.repeat(20);
let price = 1;
let catalogReads = 0;
let failing = false;
/** While set, the catalog comes in pieces (no Content-Length) with this many bytes of padding. */
let chunkedPadding = 0;
/** While set, catalog answers wait for `release()`. */
let held: Array<() => void> | null = null;
const server = createServer((req, res) => {
  if (req.url !== '/v1/models') return void res.writeHead(404).end();
  catalogReads += 1;
  if (failing) return void res.writeHead(503).end();
  if (chunkedPadding > 0) return void jsonInPieces(res, catalogOf(price), chunkedPadding);
  const answer = catalogAnswer(res, price);
  if (held) held.push(answer);
  else answer();
});
let pool: Pool;

const catalogOf = (inputUsdPerMillion: number) => ({
  data: [
    {
      id: 'model-a',
      peers: [{ peerId: PEER, prices: { inputUsdPerMillion, outputUsdPerMillion: 2 } }],
    },
  ],
});

function catalogAnswer(res: ServerResponse, inputUsdPerMillion: number): () => void {
  const body = JSON.stringify(catalogOf(inputUsdPerMillion));
  return () => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
}

function release(): void {
  const waiting = held ?? [];
  held = null;
  for (const answer of waiting) answer();
}

let close: () => Promise<void>;
beforeAll(async () => {
  ({ pool, close } = await poolTo(server));
});
afterAll(() => close());

const inputPrice = async (book: PriceBook) =>
  (await book.offersOf('model-a'))?.[0]?.price.inputMicroPerMillion;

describe('PriceBook', () => {
  it('waits for the first catalog, then refreshes a stale one while the last one answers', async () => {
    let now = 1_000_000;
    const book = new PriceBook(pool, {}, () => now);
    price = 1;
    catalogReads = 0;
    expect(await inputPrice(book)).toBe(1_000_000n);
    expect(catalogReads).toBe(1);

    // Fresh: no read at all.
    now += 9_000;
    expect(await inputPrice(book)).toBe(1_000_000n);
    expect(catalogReads).toBe(1);

    // Stale: answered from the last catalog while the buyer has not answered the new read.
    price = 3;
    now += 2_000;
    held = [];
    expect(await inputPrice(book)).toBe(1_000_000n);
    expect(await inputPrice(book)).toBe(1_000_000n);
    await waitFor(() => held !== null && held.length === 1);
    release();
    await waitFor(async () => (await inputPrice(book)) === 3_000_000n);
    // One read for the stale period, however many requests asked meanwhile.
    expect(catalogReads).toBe(2);
  });

  it('waits for the catalog again when the last one is over a minute old', async () => {
    let now = 5_000_000;
    const book = new PriceBook(pool, {}, () => now);
    price = 1;
    expect(await inputPrice(book)).toBe(1_000_000n);
    price = 4;
    now += 61_000;
    expect(await inputPrice(book)).toBe(4_000_000n);
  });

  it('keeps the last catalog when a refresh fails', async () => {
    let now = 9_000_000;
    const book = new PriceBook(pool, {}, () => now);
    price = 2;
    expect(await inputPrice(book)).toBe(2_000_000n);
    failing = true;
    catalogReads = 0;
    now += 11_000;
    expect(await inputPrice(book)).toBe(2_000_000n);
    await waitFor(() => catalogReads === 1);
    // Over a minute old: a request waits for a read (joining the failed one if it is still
    // under way, then its own), and is still answered from the last catalog.
    now += 61_000;
    await waitFor(async () => {
      expect(await inputPrice(book)).toBe(2_000_000n);
      return catalogReads >= 2;
    });
    failing = false;
  });
});

describe('PriceBook, a catalog sent in pieces', () => {
  it('reads one under the limit, and refuses one over it, keeping the last catalog', async () => {
    let now = 20_000_000;
    const book = new PriceBook(pool, {}, () => now);
    try {
      price = 5;
      chunkedPadding = 1024 * 1024;
      expect(await inputPrice(book)).toBe(5_000_000n);
      // Over 8 MiB with no length declared: counted as it comes and given up.
      price = 6;
      chunkedPadding = MAX_CATALOG_BYTES + 64 * 1024;
      catalogReads = 0;
      now += 61_000;
      expect(await inputPrice(book)).toBe(5_000_000n);
      expect(catalogReads).toBe(1);
    } finally {
      chunkedPadding = 0;
    }
  });
});

async function waitFor(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not reached');
}
