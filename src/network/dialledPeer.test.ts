/**
 * A dial by PeerId hands the dialled PeerId to Noise without parsing it again (dialledPeer.ts):
 * the connection still reaches only that peer, under its full address, and a node that answers
 * at the peer's address with another identity is refused before any connection opens.
 */
import type { Connection } from '@libp2p/interface';
import { multiaddr } from '@multiformats/multiaddr';
import { afterEach, describe, expect, it } from 'vitest';
import type { SvcNode } from './node.js';
import { startLoopbackNode } from './testing/loopback.js';

/** The address the upgrader saw (the transport's connection, inside libp2p's). */
const upgradedAddress = (connection: Connection) =>
  (
    connection as Connection & { maConn: { remoteAddr: { toString(): string } } }
  ).maConn.remoteAddr.toString();

/** `node`'s listening address without its `/p2p/` part. */
const bareAddress = (node: SvcNode) => multiaddr(node.multiaddrs()[0]!).decapsulateCode(421);

describe('a dial hands the dialled PeerId to Noise', () => {
  const nodes: SvcNode[] = [];
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.stop();
  });

  it('reaches the peer dialled, under its address with its id', async () => {
    const seller = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('client');
    nodes.push(seller, buyer);
    await buyer.libp2p.peerStore.merge(seller.libp2pPeerId, { multiaddrs: [bareAddress(seller)] });

    const connection = await buyer.libp2p.dial(seller.libp2pPeerId);

    expect(connection.remotePeer.equals(seller.libp2pPeerId)).toBe(true);
    expect(connection.remoteAddr.toString()).toBe(
      `${bareAddress(seller).toString()}/p2p/${seller.libp2pPeerId.toString()}`,
    );
    // The upgrader was given the address without the id: it had nothing to parse.
    expect(upgradedAddress(connection)).toBe(bareAddress(seller).toString());
    expect(await buyer.libp2p.services.ping.ping(seller.libp2pPeerId)).toBeGreaterThanOrEqual(0);
    const known = await buyer.libp2p.peerStore.get(seller.libp2pPeerId);
    expect(known.addresses.map((a) => a.multiaddr.toString())).toContain(
      bareAddress(seller).toString(),
    );
  });

  it('refuses a node that answers at the dialled peer’s address with another identity', async () => {
    const seller = await startLoopbackNode('seller');
    const impostor = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('client');
    nodes.push(seller, impostor, buyer);
    // The buyer believes the seller listens where the impostor does.
    await buyer.libp2p.peerStore.merge(seller.libp2pPeerId, {
      multiaddrs: [bareAddress(impostor)],
    });

    const dial = buyer.libp2p.dial(seller.libp2pPeerId);

    await expect(dial).rejects.toThrow(/does not match expected/);
    expect(buyer.libp2p.getConnections(impostor.libp2pPeerId)).toEqual([]);
    expect(buyer.libp2p.getConnections(seller.libp2pPeerId)).toEqual([]);
    expect(impostor.libp2p.getConnections(buyer.libp2pPeerId)).toEqual([]);
  });

  it('dials an address with its id as before, and refuses a wrong id in it', async () => {
    const seller = await startLoopbackNode('seller');
    const other = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('client');
    nodes.push(seller, other, buyer);

    const connection = await buyer.libp2p.dial(multiaddr(seller.multiaddrs()[0]!));
    expect(connection.remotePeer.equals(seller.libp2pPeerId)).toBe(true);

    const wrong = bareAddress(seller).encapsulate(`/p2p/${other.libp2pPeerId.toString()}`);
    await expect(buyer.libp2p.dial(wrong)).rejects.toThrow(/does not match expected/);
    expect(buyer.libp2p.getConnections(other.libp2pPeerId)).toEqual([]);
  });
});
