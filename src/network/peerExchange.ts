/**
 * `/svc/peers/1`: a node answers every stream with one HEAD frame listing the peers it is connected
 * to that serve seller records (`/svc/meta/1`), with their addresses, and closes (decision 012).
 * A buyer asks the peers it is connected to (the bootstrap nodes first of all), so a seller that
 * just joined is found at once instead of after the DHT has taken its provider record, which can
 * take 30 s on a fresh node. The list is only a hint: every record it leads to is fetched from the
 * peer itself and verified, so a lying list costs dials, never a forged offer.
 */
import type {
  Connection,
  Libp2p,
  PeerId as Libp2pPeerId,
  PeerStore,
  Startable,
  Stream,
  StreamHandler,
  StreamHandlerOptions,
} from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { z } from 'zod';
import { asError } from '../errors/index.js';
import { FrameReader, FrameType } from './frames.js';
import { writeFrame } from './frameWrites.js';
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

/** The answer's wire shape: one JSON object in a HEAD frame. */
type ExchangedList = z.infer<typeof listSchema>;

/** A peer learned from an exchange: its libp2p id and the addresses to dial. */
export interface ExchangedPeer {
  id: Libp2pPeerId;
  addrs: ReturnType<typeof multiaddr>[];
}

/**
 * The parts of a libp2p node the exchange uses (a subset of libp2p's components), so a test can
 * stub them without a real node.
 */
export interface PeerExchangeComponents {
  peerId: Libp2pPeerId;
  registrar: {
    handle(protocol: string, handler: StreamHandler, options?: StreamHandlerOptions): Promise<void>;
    unhandle(protocol: string): Promise<void>;
  };
  connectionManager: { getConnections(): Connection[] };
  peerStore: Pick<PeerStore, 'get'>;
}

export interface PeerExchangeInit {
  /** Concurrent inbound `/svc/peers/1` streams per connection. */
  maxInboundStreams?: number;
}

/** Serves `/svc/peers/1` while the node runs (every role: bootstrap nodes above all). */
export class PeerExchange implements Startable {
  readonly [Symbol.toStringTag] = 'svc/peer-exchange';
  private readonly components: PeerExchangeComponents;
  private readonly maxInboundStreams: number;

  constructor(components: PeerExchangeComponents, init: PeerExchangeInit = {}) {
    this.components = components;
    this.maxInboundStreams = init.maxInboundStreams ?? 32;
  }

  async start(): Promise<void> {
    await this.components.registrar.handle(
      PEERS_PROTOCOL,
      (stream, connection) => this.answer(stream, connection.remotePeer),
      { maxInboundStreams: this.maxInboundStreams },
    );
  }

  async stop(): Promise<void> {
    await this.components.registrar.unhandle(PEERS_PROTOCOL);
  }

  /** Our connected peers that serve seller records (not the asker, not us), as the wire list. */
  async sellersWeSee(asker: Libp2pPeerId): Promise<ExchangedList> {
    const { connectionManager, peerStore, peerId } = this.components;
    const peers: ExchangedList['peers'] = [];
    const seen = new Set<string>([asker.toString(), peerId.toString()]);
    for (const connection of connectionManager.getConnections()) {
      if (peers.length >= MAX_EXCHANGED_PEERS) break;
      const id = connection.remotePeer.toString();
      if (seen.has(id)) continue;
      seen.add(id);
      const peer = await peerStore.get(connection.remotePeer).catch(() => undefined);
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
    return { peers };
  }

  private async answer(stream: Stream, asker: Libp2pPeerId): Promise<void> {
    try {
      const list = JSON.stringify(await this.sellersWeSee(asker));
      await writeFrame(stream, FrameType.head, new TextEncoder().encode(list));
      await stream.close({ signal: AbortSignal.timeout(10_000) });
    } catch (error) {
      stream.abort(asError(error));
    }
  }
}

/** The exchange as a libp2p service: `services: { peerExchange: peerExchange() }`. */
export function peerExchange(
  init: PeerExchangeInit = {},
): (components: PeerExchangeComponents) => PeerExchange {
  return (components) => new PeerExchange(components, init);
}

/** Asks a connected peer for the sellers it sees; [] when it does not answer or answers garbage. */
export async function fetchPeerList(
  libp2p: Pick<Libp2p, 'dialProtocol'>,
  remote: Libp2pPeerId,
  timeoutMs = 3_000,
): Promise<ExchangedPeer[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  let stream: Stream | undefined;
  try {
    stream = await libp2p.dialProtocol(remote, PEERS_PROTOCOL, { signal });
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
