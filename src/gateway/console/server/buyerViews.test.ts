/**
 * The console's network page reads the buyer's peer list, which the buyer sends in pieces with no
 * length declared: it is read up to its limit by the bytes counted, not by a declared length.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkPage } from './buyerViews.js';
import type { ConsoleDeps } from './deps.js';

/** Bytes of padding in the next peer list. */
let padding = 0;
const server = createServer((req, res) => {
  if (req.url === '/_svc/status') return void res.end(JSON.stringify({ peerCount: 1 }));
  if (req.url === '/_svc/peers') return void peersInPieces(res, padding);
  res.writeHead(404).end();
});
let pool: Pool;

/** One peer, then a padding field, written in 64 KiB pieces: no Content-Length. */
function peersInPieces(res: ServerResponse, bytes: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(`{"peers":[{"peerId":"${'ab'.repeat(20)}"}],"padding":"`);
  const piece = 'x'.repeat(64 * 1024);
  let left = bytes;
  const more = (): void => {
    while (left > 0) {
      left -= piece.length;
      if (res.destroyed) return;
      if (!res.write(piece)) return void res.once('drain', more);
    }
    res.end('"}');
  };
  more();
}

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await pool.close();
  await new Promise((resolve) => server.close(resolve));
});

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
