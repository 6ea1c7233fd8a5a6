/**
 * A buyer that asks for an answer and stops reading it holds the seller's request (its slot and
 * the upstream call behind it) only until the seller's idle time passes with no bytes taken, not
 * until the request's total timeout; a buyer that reads slowly but steadily is never cut. Real
 * libp2p nodes on loopback; the buyer is the real transport, whose reads pause the stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SvcNode } from './node.js';
import { type RequestServer, serveRequests } from './requestServer.js';
import { startLoopbackNode, type TestIdentity, waitFor } from './testing/loopback.js';
import { textRequest } from './testing/requests.js';
import { LibP2pTransport } from './transport.js';

type Node = SvcNode & { identity: TestIdentity };
const BLOCK = new Uint8Array(256 * 1024).fill(97);
const BLOCKS = 160; // 40 MiB: more than the windows and buffers between the two hold.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a buyer that stops reading', () => {
  let seller: Node;
  let buyer: Node;
  let server: RequestServer;
  let transport: LibP2pTransport;
  const ended: string[] = [];

  beforeAll(async () => {
    seller = await startLoopbackNode('seller');
    buyer = await startLoopbackNode('buyer');
    server = await serveRequests(
      seller,
      async (req) => ({
        status: 200,
        headers: {},
        body: (async function* () {
          for (let i = 0; i < BLOCKS; i++) yield BLOCK;
        })(),
        trailer: (error?: Error) => {
          ended.push(error ? `${req.path}: ${error.message}` : `${req.path}: whole`);
          return {};
        },
      }),
      { uploadLimitBytes: () => 1024, idleTimeoutMs: 1_000, totalTimeoutMs: 3_600_000 },
    );
    transport = new LibP2pTransport({
      node: buyer,
      router: {
        route: () => ({
          libp2pPeerId: seller.libp2pPeerId,
          addresses: seller.libp2p.getMultiaddrs(),
          uploadLimitBytes: 1024,
        }),
      },
    });
  });

  afterAll(async () => {
    await server?.stop();
    await buyer?.stop();
    await seller?.stop();
  });

  it('is cut by the seller after its idle time, freeing the request', async () => {
    const response = await transport.request(seller.peerId, textRequest('/stalled'));
    const chunks = response.body[Symbol.asyncIterator]();
    expect((await chunks.next()).done).toBe(false);
    // The buyer reads nothing more; the seller gives the request up (its handler learns why).
    await waitFor(() => ended.some((e) => e.startsWith('/stalled')), 20_000, 'the seller gave up');
    expect(ended.find((e) => e.startsWith('/stalled'))).toBe(
      '/stalled: the reader took no bytes for 1 s',
    );
    expect(server.active()).toBe(0);
    // What the buyer holds ends in an error, never a clean end.
    const rest = await (async () => {
      for (let next = await chunks.next(); !next.done; next = await chunks.next());
    })().catch((error: unknown) => error);
    expect(rest).toBeInstanceOf(Error);
  }, 30_000);

  it('is not cut while it reads slowly but steadily', async () => {
    const response = await transport.request(seller.peerId, textRequest('/steady'));
    let bytes = 0;
    for await (const chunk of response.body) {
      bytes += chunk.byteLength;
      // Slower than the seller writes, never idle for its 1 s.
      if (bytes % (2 * 1024 * 1024) < chunk.byteLength) await sleep(150);
    }
    expect(bytes).toBe(BLOCKS * BLOCK.byteLength);
    expect(ended).toContain('/steady: whole');
  }, 60_000);
});
