import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SvcNode } from './node.js';
import { REQUEST_PROTOCOL } from './protocols.js';
import { type RequestServer, serveRequests } from './requestServer.js';
import { startLoopbackNode, waitFor } from './testing/loopback.js';
import { LibP2pTransport } from './transport.js';
import type { SellerResponse } from './types.js';

const text = new TextEncoder();

async function finish(response: SellerResponse): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  await response.trailer;
  return Buffer.concat(chunks).toString();
}

const until = (check: () => boolean, ms = 5000) => waitFor(check, ms);

describe("the buyer's finished request streams", () => {
  let seller: SvcNode;
  let buyer: SvcNode;
  let server: RequestServer;
  let transport: LibP2pTransport;

  beforeAll(async () => {
    seller = await startLoopbackNode('seller');
    buyer = await startLoopbackNode('buyer');
    server = await serveRequests(
      seller,
      async (request) => ({ status: 200, headers: {}, body: text.encode(`got ${request.path}`) }),
      { uploadLimitBytes: () => 1024 * 1024 },
    );
    const addresses = seller.libp2p.getMultiaddrs();
    transport = new LibP2pTransport({
      node: buyer,
      router: {
        route: () => ({
          libp2pPeerId: seller.libp2pPeerId,
          addresses,
          uploadLimitBytes: 1024 * 1024,
        }),
      },
    });
  });

  afterAll(async () => {
    await server?.stop();
    await buyer?.stop();
    await seller?.stop();
  });

  /** The seller's request streams its buyer has not closed its half of yet. */
  const open = () =>
    seller.libp2p
      .getConnections(buyer.libp2pPeerId)
      .flatMap((connection) => connection.streams)
      .filter((stream) => stream.protocol === REQUEST_PROTOCOL);

  const send = (path: string) =>
    transport.request(seller.peerId, {
      method: 'POST',
      path,
      headers: {},
      body: new Uint8Array(0),
    });

  it('are closed with the next request on the connection, or soon after the last one', async () => {
    expect(await finish(await send('/a'))).toBe('got /a');
    await new Promise((resolve) => setTimeout(resolve, 30));
    // The answer is complete, but the buyer's FIN waits for the next write.
    const first = open();
    expect(first).toHaveLength(1);
    expect(first[0]!.remoteWriteStatus).toBe('writable');
    expect(await finish(await send('/b'))).toBe('got /b');
    await until(() => !open().includes(first[0]!));
    // No request follows the last one: its stream is closed within the sweep.
    await until(() => open().length === 0, 2000);
  });
});
