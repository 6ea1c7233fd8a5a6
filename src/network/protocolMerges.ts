/**
 * One peer-store write per peer and protocol a minute, not one per stream. For every inbound
 * stream libp2p merges the negotiated protocol into the peer store (`peerStore.merge(peer,
 * { protocols: [protocol] })`): a datastore read, protobuf decode, merge, encode and write even
 * when the protocol is already recorded (~3 % of a seller's CPU per request). A merge of one
 * protocol already merged for that peer less than a minute ago, with no peer-store update for
 * that peer since (libp2p emits `peer:update` for every change), answers the peer the last merge
 * returned instead. The recorded protocols are the same; only the record's `updated` time is
 * refreshed once a minute instead of per stream (peers expire after an hour without one).
 */
import type { Libp2p, Peer, PeerId, PeerStore } from '@libp2p/interface';

const FRESH_MS = 60_000;
const MAX_PEERS = 4_096;

interface Merged {
  protocols: Set<string>;
  peer: Peer;
  at: number;
}

/** Patches `libp2p.peerStore.merge` as described above (once per node). */
export function skipRepeatedProtocolMerges(libp2p: Libp2p, now: () => number = Date.now): void {
  const store: PeerStore = libp2p.peerStore;
  const merge = store.merge.bind(store);
  const merged = new Map<string, Merged>();
  libp2p.addEventListener('peer:update', (event) => {
    merged.delete(event.detail.peer.id.toString());
  });
  store.merge = async (id: PeerId, data, options) => {
    const keys = Object.keys(data);
    const protocol = data.protocols?.length === 1 ? data.protocols[0] : undefined;
    if (protocol === undefined || keys.length !== 1) return merge(id, data, options);
    const key = id.toString();
    const known = merged.get(key);
    if (known?.protocols.has(protocol) && now() - known.at < FRESH_MS) return known.peer;
    const peer = await merge(id, data, options);
    if (merged.size >= MAX_PEERS) merged.clear();
    // A merge that changed the record emitted `peer:update` (deleting the entry) before
    // returning, so the entry starts afresh from what this merge returned.
    merged.set(key, { protocols: new Set(peer.protocols), peer, at: now() });
    return peer;
  };
}
