/**
 * `/svc/peers/1`: a node answers every stream with one HEAD frame listing the peers it is connected
 * to that serve seller records (`/svc/meta/1`), with their addresses, and closes (decision 012).
 * A buyer asks the peers it is connected to (the bootstrap nodes first of all), so a seller that
 * just joined is found at once instead of after the DHT has taken its provider record, which can
 * take 30 s on a fresh node. The list is only a hint: every record it leads to is fetched from the
 * peer itself and verified, so a lying list costs dials, never a forged offer.
 */
import type { PeerId as Libp2pPeerId, Stream } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { z } from 'zod';
import { FrameReader, FrameType, writeFrame } from './frames.js';
import type { SvcNode } from './node.js';
import { META_PROTOCOL, PEERS_PROTOCOL } from './protocols.js';

/** At most this many peers in one answer, and addresses per peer. */
export const MAX_EXCHANGED_PEERS = 200;
const MAX_ADDRESSES = 8;
const MAX_LIST_BYTES = 256 * 1024;

const listSchema = z.strictObject({
  peers: z
    .array(
      z.strictObject({
        id: z.string().min(1).max(128),
        addrs: z.array(z.string().min(1).max(256)).max(MAX_ADDRESSES),
      }),
    )
    .max(MAX_EXCHANGED_PEERS),
});

/** A peer learned from an exchange: its libp2p id and the addresses to dial. */
export interface ExchangedPeer {
  id: Libp2pPeerId;
  addrs: ReturnType<typeof multiaddr>[];
}

/** Our connected peers that serve seller records (not the asker itself). */
async function sellersWeSee(node: SvcNode, asker: Libp2pPeerId): Promise<string> {
  const peers: z.infer<typeof listSchema>['peers'] = [];
  const seen = new Set<string>([asker.toString(), node.libp2pPeerId.toString()]);
  for (const connection of node.libp2p.getConnections()) {
    if (peers.length >= MAX_EXCHANGED_PEERS) break;
    const id = connection.remotePeer.toString();
    if (seen.has(id)) continue;
    seen.add(id);
    const peer = await node.libp2p.peerStore.get(connection.remotePeer).catch(() => undefined);
    if (!peer?.protocols.includes(META_PROTOCOL)) continue;
    const addrs = peer.addresses.map((address) => address.multiaddr.toString());
    peers.push({
      id,
      addrs: (addrs.length > 0 ? addrs : [connection.remoteAddr.toString()]).slice(
        0,
        MAX_ADDRESSES,
      ),
    });
  }
  return JSON.stringify({ peers });
}

/** Serves `/svc/peers/1` on `node` (every role: bootstrap nodes are where it matters most). */
export async function servePeerExchange(node: SvcNode): Promise<void> {
  await node.libp2p.handle(
    PEERS_PROTOCOL,
    async (stream: Stream, connection) => {
      try {
        const list = await sellersWeSee(node, connection.remotePeer);
        await writeFrame(stream, FrameType.head, new TextEncoder().encode(list));
        await stream.close({ signal: AbortSignal.timeout(10_000) });
      } catch (error) {
        stream.abort(error instanceof Error ? error : new Error(String(error)));
      }
    },
    { maxInboundStreams: 32 },
  );
}

/** Asks a connected peer for the sellers it sees; [] when it does not answer or answers garbage. */
export async function fetchPeerList(
  node: SvcNode,
  remote: Libp2pPeerId,
  timeoutMs = 3_000,
): Promise<ExchangedPeer[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  let stream: Stream | undefined;
  try {
    stream = await node.libp2p.dialProtocol(remote, PEERS_PROTOCOL, { signal });
    const frame = await new FrameReader(stream).read(() => MAX_LIST_BYTES, signal);
    if (frame === undefined || frame.type !== FrameType.head) return [];
    const parsed = listSchema.safeParse(JSON.parse(new TextDecoder().decode(frame.payload)));
    if (!parsed.success) return [];
    const out: ExchangedPeer[] = [];
    for (const entry of parsed.data.peers) {
      try {
        out.push({ id: peerIdFromString(entry.id), addrs: entry.addrs.map((a) => multiaddr(a)) });
      } catch {
        // An unparsable entry is skipped; the rest of the list still counts.
      }
    }
    return out;
  } catch {
    return [];
  } finally {
    await stream?.close().catch(() => stream?.abort(new Error('close failed')));
  }
}
