/**
 * Opening a `/svc/request/1` stream without waiting for protocol negotiation.
 *
 * libp2p v3's `newStream` always runs multistream-select to completion (it ignores
 * `negotiateFully: false`): one extra round trip, four extra muxer frames and a peer-store
 * merge per request. The buyer instead sends the multistream-select proposal
 * (`/multistream/1.0.0`, then the protocol) in the same write as the request head and checks
 * the seller's echo before reading the response head. The bytes on the wire are exactly what
 * optimistic ("lazy") multistream-select sends, so any libp2p seller understands them: its
 * `handle` reads the proposal, answers, and hands the rest of the bytes to the protocol handler.
 */
import type { Connection, PeerId as Libp2pPeerId, Stream } from '@libp2p/interface';
import type { Multiaddr } from '@multiformats/multiaddr';
import type { FrameReader } from './frames.js';
import type { SvcNode } from './node.js';
import { isRelayed } from './reachability.js';

const MULTISTREAM_ID = '/multistream/1.0.0';
const encoder = new TextEncoder();

/** One multistream-select message: varint length, then `text\n`. */
function mssMessage(text: string): Uint8Array {
  const body = encoder.encode(`${text}\n`);
  if (body.byteLength >= 0x4000) throw new RangeError('protocol id too long');
  const prefix =
    body.byteLength < 0x80
      ? [body.byteLength]
      : [(body.byteLength & 0x7f) | 0x80, body.byteLength >> 7];
  const out = new Uint8Array(prefix.length + body.byteLength);
  out.set(prefix, 0);
  out.set(body, prefix.length);
  return out;
}

/** The proposal bytes of a protocol and their parts (few protocols: made once each). */
interface Proposal {
  bytes: Uint8Array;
  header: Uint8Array;
  answer: Uint8Array;
}
const proposals = new Map<string, Proposal>();

function proposalOf(protocol: string): Proposal {
  let proposal = proposals.get(protocol);
  if (proposal === undefined) {
    const header = mssMessage(MULTISTREAM_ID);
    const answer = mssMessage(protocol);
    proposal = { bytes: Buffer.concat([header, answer]), header, answer };
    // The protocol ids come from this node's own code; bounded all the same.
    if (proposals.size < 64) proposals.set(protocol, proposal);
  }
  return proposal;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The seller refused the protocol (answered `na`) or is not speaking multistream-select. */
export class ProtocolRejected extends Error {
  override name = 'ProtocolRejected';
}

export interface RequestStream {
  stream: Stream;
  /** Bytes to send before the first frame (empty when the stream is already negotiated). */
  proposal: Uint8Array;
  /** Reads and checks the seller's answer to `proposal` (a no-op when there was none). */
  acknowledged(reader: FrameReader, signal: AbortSignal): Promise<void>;
}

interface MuxerLike {
  status: string;
  createStream(options?: { signal?: AbortSignal }): Promise<Stream>;
}

function muxerOf(connection: Connection): MuxerLike | undefined {
  // Not part of the Connection interface: used when present, else the negotiated path.
  const muxer = (connection as Connection & { muxer?: Partial<MuxerLike> }).muxer;
  if (muxer?.status === 'open' && typeof muxer.createStream === 'function') {
    return muxer as MuxerLike;
  }
  return undefined;
}

/** The open connections of `connections` that carry requests (not limited, i.e. not relayed-limited). */
export function usableConnections(connections: readonly Connection[]): Connection[] {
  const usable: Connection[] = [];
  for (const c of connections) if (c.status === 'open' && c.limits === undefined) usable.push(c);
  return usable;
}

/** Where a request's connection may come from besides a new dial by libp2p's queue. */
export interface ConnectionSources {
  /** The peer's usable connections, when the caller has just listed them. */
  usable?: readonly Connection[];
  /** The route's addresses, for a dial by route (routeDial.ts). */
  addresses?: readonly Multiaddr[];
  /** Teaches the peer store the route's addresses before a dial by libp2p's queue. */
  remember?: () => Promise<unknown>;
}

/**
 * The connection to `peer` a request goes on: an open one when there is one, else a new dial to
 * the route's addresses (routeDial.ts), or, where that path does not apply, a dial by libp2p's
 * queue to the addresses the peer store holds (`remember` first writes the route's there).
 */
export async function requestConnection(
  node: SvcNode,
  peer: Libp2pPeerId,
  signal: AbortSignal,
  {
    usable = usableConnections(node.libp2p.getConnections(peer)),
    addresses = [],
    remember,
  }: ConnectionSources = {},
): Promise<Connection> {
  // After hole punching a peer has a relayed and a direct connection: use the direct one.
  const open = usable.find((c) => !isRelayed(c)) ?? usable[0];
  if (open !== undefined) return open;
  const direct = node.libp2p.services.routeDialer.dial(peer, addresses, signal);
  if (direct !== undefined) return await direct;
  await remember?.();
  return await node.libp2p.dial(peer, { signal });
}

/** Opens a stream for `protocol` on `connection`, its proposal to be sent with the first frame. */
export async function openRequestStream(
  connection: Connection,
  protocol: string,
  signal: AbortSignal,
): Promise<RequestStream> {
  const muxer = muxerOf(connection);
  if (muxer === undefined) {
    const stream = await connection
      .newStream(protocol, { signal, maxOutboundStreams: 1024 })
      .catch((error: unknown) => {
        // Negotiated by libp2p: a refusal is thrown here rather than read from the echo.
        if (error instanceof Error && error.name === 'UnsupportedProtocolError')
          throw new ProtocolRejected(`the peer does not serve ${protocol}`);
        throw error;
      });
    return { stream, proposal: new Uint8Array(0), acknowledged: async () => undefined };
  }
  const stream = await muxer.createStream({ signal });
  stream.protocol = protocol;
  const { bytes, header, answer } = proposalOf(protocol);
  return {
    stream,
    proposal: bytes,
    async acknowledged(reader, ackSignal) {
      const echoed = await reader.readRaw(header.byteLength, ackSignal);
      if (!sameBytes(echoed, header)) {
        throw new ProtocolRejected('the peer does not speak multistream-select');
      }
      // `na\n` is shorter than our protocol id: read the length first.
      const [length] = await reader.readRaw(1, ackSignal);
      if (length !== answer[0]) throw new ProtocolRejected(`the peer does not serve ${protocol}`);
      const rest = await reader.readRaw(answer.byteLength - 1, ackSignal);
      if (!sameBytes(rest, answer.subarray(1))) {
        throw new ProtocolRejected(`the peer does not serve ${protocol}`);
      }
    },
  };
}
