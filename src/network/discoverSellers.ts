/**
 * Where a refresh of the peer cache looks for sellers: providers of the sellers DHT key, the
 * lists of connected nodes that serve `/svc/peers/1` (bootstrap nodes, mostly), and connected
 * peers that speak `/svc/meta/1`. Addresses learned on the way go to the peer store.
 */
import type { PeerId as Libp2pPeerId } from '@libp2p/interface';
import { type Multiaddr, multiaddr } from '@multiformats/multiaddr';
import type { SvcNode } from './node.js';
import { fetchPeerList } from './peerExchange.js';
import { META_PROTOCOL, PEERS_PROTOCOL, sellersDhtKey } from './protocols.js';

/** Connected nodes asked for their sellers per refresh (bootstrap nodes, mostly). */
const EXCHANGE_PEERS = 8;

type Add = (id: Libp2pPeerId) => void;

/** The sellers found, by libp2p peer id string (never this node itself). */
export async function discoverSellers(
  node: SvcNode,
  lookupTimeoutMs: number,
): Promise<Map<string, Libp2pPeerId>> {
  const libp2p = node.libp2p;
  const candidates = new Map<string, Libp2pPeerId>();
  const self = libp2p.peerId.toString();
  const add = (id: Libp2pPeerId) => {
    if (id.toString() !== self) candidates.set(id.toString(), id);
  };
  if (libp2p.getConnections().length > 0) {
    // The DHT lookup and the peer exchange with connected nodes run side by side: the exchange
    // finds a seller that joined a moment ago, the DHT finds the ones nobody we know is near.
    await Promise.all([lookupProviders(node, lookupTimeoutMs, add), exchangePeers(node, add)]);
  }
  for (const connection of libp2p.getConnections()) {
    const peer = await libp2p.peerStore.get(connection.remotePeer).catch(() => undefined);
    if (peer?.protocols.includes(META_PROTOCOL)) add(connection.remotePeer);
  }
  return candidates;
}

async function lookupProviders(node: SvcNode, timeoutMs: number, add: Add): Promise<void> {
  const libp2p = node.libp2p;
  try {
    const signal = AbortSignal.timeout(timeoutMs);
    for await (const provider of libp2p.contentRouting.findProviders(await sellersDhtKey(), {
      signal,
    })) {
      if (provider.multiaddrs.length > 0) {
        await libp2p.peerStore
          .merge(provider.id, { multiaddrs: provider.multiaddrs })
          .catch(() => undefined);
      }
      add(provider.id);
    }
  } catch (error) {
    node.logger.debug({ err: String(error) }, 'provider lookup ended early');
  }
}

/** Asks up to EXCHANGE_PEERS connected nodes that serve `/svc/peers/1` which sellers they see. */
async function exchangePeers(node: SvcNode, add: Add): Promise<void> {
  const libp2p = node.libp2p;
  const askable: Libp2pPeerId[] = [];
  for (const connection of libp2p.getConnections()) {
    if (askable.length >= EXCHANGE_PEERS) break;
    const peer = await libp2p.peerStore.get(connection.remotePeer).catch(() => undefined);
    if (peer?.protocols.includes(PEERS_PROTOCOL)) askable.push(connection.remotePeer);
  }
  const lists = await Promise.all(askable.map((id) => fetchPeerList(libp2p, id)));
  for (const peer of lists.flat()) {
    if (peer.addrs.length > 0) {
      await libp2p.peerStore.merge(peer.id, { multiaddrs: peer.addrs }).catch(() => undefined);
    }
    add(peer.id);
  }
}

/** The multiaddrs among `texts` that parse (a cached or hinted address may be anything). */
export function parseMultiaddrs(texts: readonly string[]): Multiaddr[] {
  return texts.flatMap((text) => {
    try {
      return [multiaddr(text)];
    } catch {
      return [];
    }
  });
}
