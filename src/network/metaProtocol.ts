/**
 * `/svc/meta/1`: the seller answers every stream with one HEAD frame holding its signed record
 * (canonical JSON) and closes. The fetcher verifies it against the authenticated remote key.
 */
import { isPeerId, type PeerId as Libp2pPeerId, type Stream } from '@libp2p/interface';
import type { Multiaddr } from '@multiformats/multiaddr';
import { asError } from '../errors/index.js';
import { FrameError, FrameReader, FrameType } from './frames.js';
import { writeFrame } from './frameWrites.js';
import { peerIdFromLibp2p } from './keys.js';
import { MAX_METADATA_BYTES, type MetadataVerdict, verifyMetadata } from './metadata/index.js';
import type { SvcNode } from './node.js';
import { META_PROTOCOL } from './protocols.js';
import { requestConnection } from './requestStream.js';

/** Serves our record; `currentBytes` is read per request so re-signed records go out at once. */
export async function serveMetadata(node: SvcNode, currentBytes: () => Uint8Array): Promise<void> {
  await node.libp2p.handle(
    META_PROTOCOL,
    async (stream: Stream) => {
      try {
        await writeFrame(stream, FrameType.head, currentBytes());
        await stream.close({ signal: AbortSignal.timeout(10_000) });
      } catch (error) {
        stream.abort(asError(error));
      }
    },
    { maxInboundStreams: 64 },
  );
}

/** Fetches and verifies a peer's record; throws only when the peer cannot be reached. */
export async function fetchMetadata(
  node: SvcNode,
  target: Libp2pPeerId | Multiaddr | Multiaddr[],
  timeoutMs = 10_000,
): Promise<{ verdict: MetadataVerdict; remote: Libp2pPeerId; addresses: string[] }> {
  const signal = AbortSignal.timeout(timeoutMs);
  // By peer: an open connection, or a dial by route under way (a request's), before a new one.
  const connection = isPeerId(target)
    ? await requestConnection(node, target, signal)
    : await node.libp2p.dial(target, { signal });
  const remote = connection.remotePeer;
  const stream = await connection.newStream(META_PROTOCOL, { signal });
  try {
    const reader = new FrameReader(stream);
    let frame: Awaited<ReturnType<FrameReader['read']>>;
    try {
      frame = await reader.read(() => MAX_METADATA_BYTES, signal);
    } catch (error) {
      // An oversized record is the peer's fault, not the network's: reject and count it.
      if (error instanceof FrameError && error.kind === 'too_large') {
        const verdict: MetadataVerdict = { ok: false, reason: 'too_large', message: error.message };
        return { verdict, remote, addresses: [connection.remoteAddr.toString()] };
      }
      throw error;
    }
    if (frame === undefined || frame.type !== FrameType.head) {
      throw new Error('peer closed the metadata stream without a record');
    }
    const expectedPeerId = peerIdFromLibp2p(remote);
    const verdict =
      expectedPeerId === undefined
        ? ({ ok: false, reason: 'wrong_peer', message: 'peer key is not secp256k1' } as const)
        : await verifyMetadata(frame.payload, { expectedPeerId });
    const addresses = [connection.remoteAddr.toString()];
    return { verdict, remote, addresses };
  } finally {
    await stream.close().catch(() => stream.abort(new Error('close failed')));
  }
}
