/**
 * `/svc/peers/1` between real libp2p nodes on loopback, and a bootstrap node admitting a burst
 * of newcomers from one address (libp2p's default would reset all but 5 per second).
 */
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { Connection, Peer, PeerId } from '@libp2p/interface';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveMetadata } from './metaProtocol.js';
import type { SvcNode } from './node.js';
import { fetchPeerList, peerExchange } from './peerExchange.js';
import { META_PROTOCOL, PEERS_PROTOCOL } from './protocols.js';
import { startLoopbackNode, waitFor } from './testing/loopback.js';

describe('peer exchange', () => {
  let bootstrap: SvcNode;
  let seller: SvcNode;
  let other: SvcNode;
  let buyer: SvcNode;
  const started: SvcNode[] = [];

  beforeAll(async () => {
    bootstrap = await startLoopbackNode('bootstrap');
    const config = { bootstrap: [bootstrap.multiaddrs()[0]!] };
    seller = await startLoopbackNode('seller', config);
    await serveMetadata(seller, () => new TextEncoder().encode('{}'));
    other = await startLoopbackNode('client', config); // connected, serves no seller records
    buyer = await startLoopbackNode('buyer', config);
    started.push(bootstrap, seller, other, buyer);
  }, 60_000);

  afterAll(async () => {
    for (const node of started.reverse()) await node.stop();
  });

  it('lists the connected peers that serve seller records, with their addresses', async () => {
    const list = await waitFor(
      async () => {
        const peers = await fetchPeerList(buyer.libp2p, bootstrap.libp2pPeerId);
        return peers.some((peer) => peer.id.equals(seller.libp2pPeerId)) && peers;
      },
      20_000,
      'the seller in the bootstrap list',
    );
    const ids = list.map((peer) => peer.id.toString());
    expect(ids).not.toContain(other.libp2pPeerId.toString());
    expect(ids).not.toContain(buyer.libp2pPeerId.toString());
    const entry = list.find((peer) => peer.id.equals(seller.libp2pPeerId))!;
    const sellerAddrs = seller.libp2p.getMultiaddrs().map((a) => a.toString().split('/p2p/')[0]);
    expect(entry.addrs.some((a) => sellerAddrs.includes(a.toString().split('/p2p/')[0]!))).toBe(
      true,
    );
  });

  it('treats a garbage answer or a peer without the protocol as an empty list', async () => {
    const liar = await startLoopbackNode('seller', { bootstrap: [bootstrap.multiaddrs()[0]!] });
    started.push(liar);
    await liar.libp2p.unhandle(PEERS_PROTOCOL);
    await liar.libp2p.handle(PEERS_PROTOCOL, async (stream) => {
      stream.send(new TextEncoder().encode('not a frame at all'));
      await stream.close();
    });
    await buyer.libp2p.dial(liar.libp2p.getMultiaddrs()[0]!);
    expect(await fetchPeerList(buyer.libp2p, liar.libp2pPeerId)).toEqual([]);
    await liar.libp2p.unhandle(PEERS_PROTOCOL);
    expect(await fetchPeerList(buyer.libp2p, liar.libp2pPeerId)).toEqual([]);
  });

  it('a bootstrap node admits a burst of newcomers from one address', async () => {
    const burst = await Promise.all(
      Array.from({ length: 12 }, () =>
        startLoopbackNode('client', { bootstrap: [bootstrap.multiaddrs()[0]!] }),
      ),
    );
    started.push(...burst);
    // Without the raised per-host threshold, libp2p resets all but 5 of these for a while.
    await waitFor(
      () =>
        burst.every((node) =>
          node.libp2p.getConnections().some((c) => c.remotePeer.equals(bootstrap.libp2pPeerId)),
        ),
      5_000,
      'every newcomer connected to the bootstrap',
    );
  });
});

describe('peer exchange service over stubbed components', () => {
  it('lists only peers that serve seller records, never the asker or itself, capped in addresses', async () => {
    const ids = await Promise.all([1, 2, 3, 4].map(() => generateKeyPair('Ed25519')));
    const [self, asker, seller, plain] = ids.map((key) => peerIdFromPrivateKey(key));
    const addr = (port: number) => multiaddr(`/ip4/127.0.0.1/tcp/${port}`);
    const connectionTo = (peer: PeerId, port: number) =>
      ({ remotePeer: peer, remoteAddr: addr(port) }) as unknown as Connection;
    const protocols = new Map<string, string[]>([
      [seller!.toString(), [META_PROTOCOL]],
      [plain!.toString(), ['/ipfs/ping/1.0.0']],
      [asker!.toString(), [META_PROTOCOL]],
    ]);
    const handled: string[] = [];
    const service = peerExchange()({
      peerId: self!,
      registrar: {
        handle: async (protocol) => void handled.push(protocol),
        unhandle: async (protocol) => void handled.splice(handled.indexOf(protocol), 1),
      },
      connectionManager: {
        getConnections: () => [
          connectionTo(asker!, 1),
          connectionTo(seller!, 2),
          connectionTo(plain!, 3),
          connectionTo(self!, 4),
        ],
      },
      peerStore: {
        get: async (peer: PeerId) =>
          ({
            protocols: protocols.get(peer.toString()) ?? [],
            addresses: Array.from({ length: 12 }, (_, i) => ({ multiaddr: addr(1000 + i) })),
          }) as unknown as Peer,
      },
    });
    await service.start();
    expect(handled).toEqual([PEERS_PROTOCOL]);
    const list = await service.sellersWeSee(asker!);
    expect(list.peers.map((peer) => peer.id)).toEqual([seller!.toString()]);
    expect(list.peers[0]!.addrs).toHaveLength(8);
    await service.stop();
    expect(handled).toEqual([]);
  });
});
