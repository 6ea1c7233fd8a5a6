/**
 * Fewer peer-store writes in front of a new connection. Each write is a datastore read, a
 * protobuf decode, the merge, an encode and a datastore write, and a dial by PeerId made two on
 * the dialling side before its connection came back: the route's addresses, written so libp2p
 * dials them (src/network/transport.ts), and libp2p's record of the successful dial (the address
 * dialled and its `last-dial-success` time), which the dial waits for
 * (docs/decisions/200-fewer-peer-store-writes-on-a-dial.md).
 *
 * - A merge of addresses only, all of them written for that peer by such a merge less than a
 *   minute ago and listed by every update of the peer since (`peer:update`), answers the peer as
 *   it was last written: the store already holds them (a peer is kept an hour after its last
 *   update, an address as long).
 * - libp2p's record of a successful dial is written RECORD_DIAL_AFTER_MS later, when the peer
 *   was written before (the dial gets the peer as last written; libp2p's dial queue does not
 *   read it). Only relay discovery reads `last-dial-success`, and a moment later.
 */
import type { Libp2p, Peer, PeerId, PeerStore } from '@libp2p/interface';

const FRESH_MS = 60_000;
const MAX_PEERS = 4_096;
/** After the request that opened the connection, as identify (src/network/node.ts). */
const RECORD_DIAL_AFTER_MS = 150;
/** libp2p's metadata key for the time of the last successful dial. */
const LAST_DIAL_SUCCESS = 'last-dial-success';

interface Written {
  addresses: Set<string>;
  peer: Peer;
  at: number;
}

type MergeData = Parameters<PeerStore['merge']>[1];

function isDialRecord(data: MergeData): boolean {
  const keys = Object.keys(data);
  const metadata = data.metadata;
  return (
    keys.length === 2 &&
    data.multiaddrs?.length === 1 &&
    metadata !== undefined &&
    !(metadata instanceof Map) &&
    Object.keys(metadata).length === 1 &&
    metadata[LAST_DIAL_SUCCESS] !== undefined
  );
}

/** Addresses as the store lists them: without a trailing `/p2p/` part naming the peer itself. */
function addressesOf(id: PeerId, multiaddrs: NonNullable<MergeData['multiaddrs']>): Set<string> {
  const own = `/p2p/${id.toString()}`;
  return new Set(
    multiaddrs.map((address) => {
      const text = address.toString();
      return text.endsWith(own) ? text.slice(0, -own.length) : text;
    }),
  );
}

/** Wraps `libp2p.peerStore.merge` as described above (once per node). */
export function fewerPeerStoreWrites(libp2p: Libp2p, now: () => number = Date.now): void {
  const store: PeerStore = libp2p.peerStore;
  const merge = store.merge.bind(store);
  const written = new Map<string, Written>();
  libp2p.addEventListener('peer:update', (event) => {
    const { peer } = event.detail;
    const key = peer.id.toString();
    const entry = written.get(key);
    if (entry === undefined) return;
    const listed = new Set(peer.addresses.map((address) => address.multiaddr.toString()));
    for (const address of entry.addresses) {
      if (!listed.has(address)) {
        written.delete(key);
        return;
      }
    }
    entry.peer = peer;
  });
  const remember = (id: PeerId, addresses: Set<string>, peer: Peer) => {
    if (written.size >= MAX_PEERS) written.clear();
    written.set(id.toString(), { addresses, peer, at: now() });
  };
  store.merge = async (id: PeerId, data, options) => {
    const keys = Object.keys(data);
    if (keys.length === 1 && data.multiaddrs !== undefined && data.multiaddrs.length > 0) {
      const addresses = addressesOf(id, data.multiaddrs);
      const known = written.get(id.toString());
      if (
        known !== undefined &&
        now() - known.at < FRESH_MS &&
        [...addresses].every((address) => known.addresses.has(address))
      ) {
        return known.peer;
      }
      const peer = await merge(id, data, options);
      remember(id, addresses, peer);
      return peer;
    }
    const known = isDialRecord(data) ? written.get(id.toString()) : undefined;
    if (known === undefined) return merge(id, data, options);
    const timer = setTimeout(
      () => void merge(id, data).catch(() => undefined),
      RECORD_DIAL_AFTER_MS,
    );
    timer.unref();
    return known.peer;
  };
}
