/**
 * Identify runs a moment after a connection opens, not at once (src/network/node.ts,
 * docs/decisions/192-identify-after-the-first-request.md): both ends still learn each other's
 * protocols and addresses, and a connection closed before then is never identified.
 */
import type { IdentifyResult } from '@libp2p/interface';
import { afterEach, describe, expect, it } from 'vitest';
import type { SvcNode } from './node.js';
import { startLoopbackNode, waitFor } from './testing/loopback.js';

/** Peers `node` identified, by libp2p peer id. */
function identified(node: SvcNode): string[] {
  const seen: string[] = [];
  node.libp2p.addEventListener('peer:identify', (event: CustomEvent<IdentifyResult>) => {
    seen.push(event.detail.peerId.toString());
  });
  return seen;
}

describe('identify after a connection opens', () => {
  const nodes: SvcNode[] = [];
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.stop();
  });

  it('identifies both ends shortly after the dial; streams work before it', async () => {
    const seller = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('client');
    nodes.push(seller, buyer);
    const buyerSaw = identified(buyer);
    const sellerSaw = identified(seller);

    await buyer.libp2p.dial(seller.libp2p.getMultiaddrs()[0]!);
    // A stream right after the dial, before identify: a ping round trip.
    expect(await buyer.libp2p.services.ping.ping(seller.libp2pPeerId)).toBeGreaterThanOrEqual(0);

    await waitFor(() => buyerSaw.length > 0 && sellerSaw.length > 0, 10_000, 'identify both ways');
    expect(buyerSaw).toEqual([seller.libp2pPeerId.toString()]);
    expect(sellerSaw).toEqual([buyer.libp2pPeerId.toString()]);
    const known = await buyer.libp2p.peerStore.get(seller.libp2pPeerId);
    expect(known.protocols).toContain(seller.config.dhtProtocol);
    expect(known.addresses.length).toBeGreaterThan(0);
  });

  it('never identifies a connection closed before its turn', async () => {
    const seller = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('client');
    nodes.push(seller, buyer);
    const buyerSaw = identified(buyer);
    const sellerSaw = identified(seller);
    const connection = await buyer.libp2p.dial(seller.libp2p.getMultiaddrs()[0]!);
    await connection.close();
    // Well past the delay: nothing was identified, nothing was dialled again.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(buyerSaw).toEqual([]);
    expect(sellerSaw).toEqual([]);
    expect(buyer.libp2p.getConnections(seller.libp2pPeerId)).toEqual([]);
  });
});
