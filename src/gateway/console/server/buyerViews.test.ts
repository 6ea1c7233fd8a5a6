/**
 * The console's network page reads the buyer's peer list, which the buyer sends in pieces with no
 * length declared: it is read up to its limit by the bytes counted, not by a declared length.
 */
import { createServer } from 'node:http';
import type { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonInPieces, poolTo } from '../../../testing/index.js';
import { networkPage } from './buyerViews.js';
import type { ConsoleDeps } from './deps.js';

/** Bytes of padding in the next peer list. */
let padding = 0;
const server = createServer((req, res) => {
  if (req.url === '/_svc/status') return void res.end(JSON.stringify({ peerCount: 1 }));
  if (req.url === '/_svc/peers')
    return void jsonInPieces(res, { peers: [{ peerId: 'ab'.repeat(20) }] }, padding);
  res.writeHead(404).end();
});
let pool: Pool;

let close: () => Promise<void>;
beforeAll(async () => {
  ({ pool, close } = await poolTo(server));
});
afterAll(() => close());

const deps = () => ({ buyer: pool }) as unknown as ConsoleDeps;

describe('the network page', () => {
  it('lists the peers of a list sent in pieces', async () => {
    padding = 256 * 1024;
    const page = await networkPage(deps());
    expect(page.problem).toBeNull();
    expect(page.peers).toEqual([{ peerId: 'ab'.repeat(20) }]);
    expect(page.status).toEqual({ peerCount: 1 });
  });

  it('gives up a list sent in pieces at 4 MiB, however long it goes on', async () => {
    // The buyer's list never ends: counted as it comes, it is given up at the limit.
    padding = Number.POSITIVE_INFINITY;
    const page = await networkPage(deps());
    expect(page).toMatchObject({ peers: [], problem: 'the buyer answer is too large' });
    // The connection given up is replaced: the next read works.
    padding = 0;
    expect((await networkPage(deps())).peers).toHaveLength(1);
  });
});
