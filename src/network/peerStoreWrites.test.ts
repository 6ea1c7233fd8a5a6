/**
 * Fewer peer-store writes in front of a new connection (peerStoreWrites.ts): addresses written a
 * moment ago are not written again while the store still lists them, and libp2p's record of a
 * successful dial still lands, a moment later for a peer written before.
 */
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { afterEach, describe, expect, it } from 'vitest';
import type { SvcNode } from './node.js';
import { startLoopbackNode, waitFor } from './testing/loopback.js';

const LAST_DIAL_SUCCESS = 'last-dial-success';

/** Counts `node`'s peer-store updates (one per write that changed a record). */
function updates(node: SvcNode): { count: number } {
  const seen = { count: 0 };
  node.libp2p.addEventListener('peer:update', () => {
    seen.count++;
  });
  return seen;
}

describe('peer-store writes on a dial', () => {
  const nodes: SvcNode[] = [];
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.stop();
  });

  it('writes the same addresses once, and again once another write dropped them', async () => {
    const node = await startLoopbackNode('client');
    nodes.push(node);
    const peer = peerIdFromPrivateKey(await generateKeyPair('secp256k1'));
    const address = multiaddr('/ip4/127.0.0.1/tcp/4001');
    const seen = updates(node);
    const listed = async () =>
      (await node.libp2p.peerStore.get(peer)).addresses.map((a) => a.multiaddr.toString());

    await node.libp2p.peerStore.merge(peer, { multiaddrs: [address] });
    await node.libp2p.peerStore.merge(peer, {
      multiaddrs: [address.encapsulate(`/p2p/${peer.toString()}`)],
    });
    expect(seen.count).toBe(1);
    expect(await listed()).toEqual([address.toString()]);

    // Another write replaces the addresses: the next merge of them writes them back.
    await node.libp2p.peerStore.patch(peer, { multiaddrs: [multiaddr('/ip4/127.0.0.1/tcp/4002')] });
    await node.libp2p.peerStore.merge(peer, { multiaddrs: [address] });
    expect(seen.count).toBe(3);
    expect(await listed()).toContain(address.toString());
  });

  it('records a successful dial: at once for a peer first met, a moment later after that', async () => {
    const seller = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('client');
    nodes.push(seller, buyer);
    const dialRecord = async () =>
      (await buyer.libp2p.peerStore.get(seller.libp2pPeerId)).metadata.get(LAST_DIAL_SUCCESS);

    // Dialled by its full address, never written before: recorded before the dial returns.
    await buyer.libp2p.dial(multiaddr(seller.multiaddrs()[0]!));
    const first = await dialRecord();
    expect(first).toBeDefined();

    await buyer.libp2p.hangUp(seller.libp2pPeerId);
    const bare = multiaddr(seller.multiaddrs()[0]!).decapsulateCode(421);
    await buyer.libp2p.peerStore.merge(seller.libp2pPeerId, { multiaddrs: [bare] });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await buyer.libp2p.dial(seller.libp2pPeerId);
    await waitFor(
      async () =>
        Buffer.from((await dialRecord()) ?? []).toString() !== Buffer.from(first!).toString(),
      5_000,
      'the second dial recorded',
    );
    const known = await buyer.libp2p.peerStore.get(seller.libp2pPeerId);
    expect(known.addresses.map((a) => a.multiaddr.toString())).toContain(bare.toString());
  });
});
