/**
 * A dial by the addresses a buyer holds (routeDial.ts), between real nodes on loopback: it reaches
 * the peer without the peer store or the dial queue, and everything that decides whether a
 * connection may exist still does: the identity check, the connection gater before and during
 * the upgrade, the addresses given and only those, the connection manager and its limit.
 */
import type { Connection, ConnectionGater } from '@libp2p/interface';
import { type Multiaddr, multiaddr } from '@multiformats/multiaddr';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchMetadata, serveMetadata } from './metaProtocol.js';
import type { SvcNode } from './node.js';
import { requestConnection } from './requestStream.js';
import { RouteDialRefused } from './routeDial.js';
import { startLoopbackNode, waitFor } from './testing/loopback.js';

/** What a test reaches inside libp2p: the node's own gater object and connection manager. */
interface Inside {
  components: {
    connectionGater: ConnectionGater;
    connectionManager: { setMaxConnections(max: number): void };
  };
}
const inside = (node: SvcNode) => (node.libp2p as unknown as Inside).components;

/** `node`'s listening address without its `/p2p/` part, as a signed record lists it. */
const bareAddress = (node: SvcNode) => multiaddr(node.multiaddrs()[0]!).decapsulateCode(421);

const dial = (from: SvcNode, to: SvcNode, addresses: Multiaddr[]) =>
  from.libp2p.services.routeDialer.dial(to.libp2pPeerId, addresses, AbortSignal.timeout(5_000));

const peerStoreAddresses = async (node: SvcNode, of: SvcNode) => {
  const peer = await node.libp2p.peerStore.get(of.libp2pPeerId).catch(() => undefined);
  return (peer?.addresses ?? []).map((a) => a.multiaddr.toString());
};

describe('a dial by route', () => {
  const nodes: SvcNode[] = [];
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.stop();
  });
  const start = async (count: number, role: 'seller' | 'client' = 'seller') => {
    const started = await Promise.all(Array.from({ length: count }, () => startLoopbackNode(role)));
    nodes.push(...started);
    return started;
  };

  it('reaches the peer at the address given, with no address in the peer store', async () => {
    const [seller] = await start(1);
    const [buyer] = await start(1, 'client');
    // A dial by PeerId through libp2p's queue has nothing to dial here.
    expect(await peerStoreAddresses(buyer!, seller!)).toEqual([]);
    await expect(
      buyer!.libp2p.dial(seller!.libp2pPeerId, { signal: AbortSignal.timeout(500) }),
    ).rejects.toThrow();

    const connection = await dial(buyer!, seller!, [bareAddress(seller!)]);

    expect(connection?.remotePeer.equals(seller!.libp2pPeerId)).toBe(true);
    expect(connection?.remoteAddr.toString()).toBe(
      `${bareAddress(seller!).toString()}/p2p/${seller!.libp2pPeerId.toString()}`,
    );
    // The connection manager tracks it, and it carries streams.
    expect(buyer!.libp2p.getConnections(seller!.libp2pPeerId)).toEqual([connection]);
    expect(await buyer!.libp2p.services.ping.ping(seller!.libp2pPeerId)).toBeGreaterThanOrEqual(0);
    expect(seller!.libp2p.getConnections(buyer!.libp2pPeerId)).toHaveLength(1);
  });

  it('refuses a node that answers at the address with another identity key', async () => {
    const [seller, impostor] = await start(2);
    const [buyer] = await start(1, 'client');

    const attempt = dial(buyer!, seller!, [bareAddress(impostor!)]);

    await expect(attempt).rejects.toThrow(/does not match expected/);
    expect(buyer!.libp2p.getConnections()).toEqual([]);
    expect(impostor!.libp2p.getConnections(buyer!.libp2pPeerId)).toEqual([]);
  });

  it('asks the gater about the peer and each address before any socket', async () => {
    const [seller] = await start(1);
    const [buyer] = await start(1, 'client');
    const gater = inside(buyer!).connectionGater;
    const denied: string[] = [];
    gater.denyDialMultiaddr = (address) => {
      denied.push(address.toString());
      return true;
    };

    await expect(dial(buyer!, seller!, [bareAddress(seller!)])).rejects.toThrow(RouteDialRefused);
    expect(denied).toEqual([`${bareAddress(seller!).toString()}/p2p/${seller!.libp2pPeerId}`]);

    gater.denyDialMultiaddr = undefined;
    gater.denyDialPeer = (peer) => peer.equals(seller!.libp2pPeerId);
    await expect(dial(buyer!, seller!, [bareAddress(seller!)])).rejects.toThrow(/refused the peer/);

    expect(buyer!.libp2p.getConnections()).toEqual([]);
    expect(seller!.libp2p.getConnections()).toEqual([]);
  });

  it('leaves the upgrade’s own gater checks in place', async () => {
    const [seller] = await start(1);
    const [buyer] = await start(1, 'client');
    let asked = 0;
    inside(buyer!).connectionGater.denyOutboundConnection = (peer) => {
      asked++;
      return peer.equals(seller!.libp2pPeerId);
    };

    await expect(dial(buyer!, seller!, [bareAddress(seller!)])).rejects.toThrow();

    expect(asked).toBe(1);
    expect(buyer!.libp2p.getConnections()).toEqual([]);
  });

  it('dials only addresses of that peer, and leaves any but direct TCP to libp2p', async () => {
    const [seller, other] = await start(2);
    const [buyer] = await start(1, 'client');
    const naming = bareAddress(seller!).encapsulate(`/p2p/${other!.libp2pPeerId.toString()}`);

    await expect(dial(buyer!, seller!, [naming])).rejects.toThrow(/no address of peer/);
    expect(buyer!.libp2p.getConnections()).toEqual([]);

    const relayed = multiaddr(
      `${other!.multiaddrs()[0]!}/p2p-circuit/p2p/${seller!.libp2pPeerId.toString()}`,
    );
    expect(dial(buyer!, seller!, [bareAddress(seller!), relayed])).toBeUndefined();
    expect(dial(buyer!, seller!, [])).toBeUndefined();
    expect(buyer!.libp2p.getConnections()).toEqual([]);
  });

  it('makes one connection for dials at once to the same peer', async () => {
    const [seller] = await start(1);
    const [buyer] = await start(1, 'client');

    const both = await Promise.all([
      dial(buyer!, seller!, [bareAddress(seller!)]),
      dial(buyer!, seller!, [bareAddress(seller!)]),
    ]);

    expect(both[0]).toBe(both[1]);
    expect(buyer!.libp2p.getConnections(seller!.libp2pPeerId)).toHaveLength(1);
  });

  it('leaves a peer libp2p’s queue is dialling to that dial: a request joins it, one connection', async () => {
    const [seller] = await start(1);
    const [buyer] = await start(1, 'client');
    await buyer!.libp2p.peerStore.merge(seller!.libp2pPeerId, {
      multiaddrs: [bareAddress(seller!)],
    });

    // A dial by libp2p's queue (a record fetch by address, a DHT walk) is under way...
    const queued = buyer!.libp2p.dial(seller!.libp2pPeerId, { signal: AbortSignal.timeout(5_000) });
    const inQueue = () =>
      buyer!.libp2p.getDialQueue().some((d) => d.peerId?.equals(seller!.libp2pPeerId) === true);
    for (let i = 0; i < 1_000 && !inQueue(); i++) await new Promise(setImmediate);
    expect(inQueue()).toBe(true);
    // ...when a request for the peer asks for a connection with the route's addresses.
    expect(dial(buyer!, seller!, [bareAddress(seller!)])).toBeUndefined();
    const forRequest = requestConnection(buyer!, seller!.libp2pPeerId, AbortSignal.timeout(5_000), {
      addresses: [bareAddress(seller!)],
    });

    const [first, second] = await Promise.all([queued, forRequest]);
    expect(second).toBe(first);
    expect(buyer!.libp2p.getConnections(seller!.libp2pPeerId)).toHaveLength(1);
  });

  it('lets a dial by peer alone (a record fetch) join a dial by route under way', async () => {
    const [seller] = await start(1);
    const [buyer] = await start(1, 'client');
    await serveMetadata(seller!, () => new TextEncoder().encode('{}'));
    // The peer store knows the address too (an earlier request taught it), so libp2p's queue
    // could dial the peer on its own.
    await buyer!.libp2p.peerStore.merge(seller!.libp2pPeerId, {
      multiaddrs: [bareAddress(seller!)],
    });

    const byRoute = dial(buyer!, seller!, [bareAddress(seller!)]);
    const fetched = fetchMetadata(buyer!, seller!.libp2pPeerId, 5_000);

    const [connection, record] = await Promise.all([byRoute, fetched]);
    expect(record.remote.equals(seller!.libp2pPeerId)).toBe(true);
    expect(record.addresses).toEqual([connection!.remoteAddr.toString()]);
    expect(buyer!.libp2p.getConnections(seller!.libp2pPeerId)).toEqual([connection]);
  });

  it('goes on for a caller still waiting when another gives up', async () => {
    const [seller] = await start(1);
    const [buyer] = await start(1, 'client');
    const impatient = new AbortController();

    const first = buyer!.libp2p.services.routeDialer.dial(
      seller!.libp2pPeerId,
      [bareAddress(seller!)],
      impatient.signal,
    );
    const second = dial(buyer!, seller!, [bareAddress(seller!)]);
    impatient.abort(new Error('the client went away'));

    await expect(first).rejects.toThrow('the client went away');
    const connection = await second;
    expect(connection?.remotePeer.equals(seller!.libp2pPeerId)).toBe(true);
    expect(connection?.status).toBe('open');
  });

  it('keeps the connection manager’s limit: past it, a connection is closed', async () => {
    const sellers = await start(3);
    const [buyer] = await start(1, 'client');
    inside(buyer!).connectionManager.setMaxConnections(2);

    const connections: (Connection | undefined)[] = [];
    for (const seller of sellers)
      connections.push(await dial(buyer!, seller, [bareAddress(seller)]));

    expect(connections.every((c) => c !== undefined)).toBe(true);
    await waitFor(() => buyer!.libp2p.getConnections().length === 2, 5_000, 'a connection pruned');
    expect(connections.filter((c) => c?.status === 'open')).toHaveLength(2);
  });

  it('stops with the node: no dial by route once it has stopped', async () => {
    const [seller] = await start(1);
    const [buyer] = await start(1, 'client');
    await buyer!.stop();

    expect(dial(buyer!, seller!, [bareAddress(seller!)])).toBeUndefined();
  });
});
