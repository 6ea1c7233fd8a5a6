/**
 * A new connection between two real nodes throws no exception in the key derivation of Noise's
 * handshake nor in the decoding of its messages
 * (docs/decisions/213-what-a-new-connection-still-costs.md). Each such exception was caught where
 * it was thrown and changed no answer, but cost a stack trace on every connection and every read.
 * The inspector counts exceptions thrown, caught ones included.
 */
import { Session } from 'node:inspector';
import { afterEach, describe, expect, it } from 'vitest';
import type { SvcNode } from './node.js';
import { startLoopbackNode } from './testing/loopback.js';

interface Thrown {
  description: string;
  frames: string[];
}

interface PausedEvent {
  params: {
    reason: string;
    data?: { description?: string };
    callFrames: { functionName: string }[];
  };
}

/** Every exception thrown on this thread while `run` runs (caught or not), with its frames. */
async function thrownDuring<T>(run: () => Promise<T>): Promise<{ result: T; thrown: Thrown[] }> {
  const session = new Session();
  session.connect();
  const thrown: Thrown[] = [];
  session.on('Debugger.paused', (event: PausedEvent) => {
    const { reason, data, callFrames } = event.params;
    if (reason === 'exception' || reason === 'promiseRejection') {
      thrown.push({
        description: (data?.description ?? '').split('\n')[0] ?? '',
        frames: callFrames.map((frame) => frame.functionName),
      });
    }
    session.post('Debugger.resume');
  });
  session.post('Debugger.enable');
  session.post('Debugger.setPauseOnExceptions', { state: 'all' });
  try {
    const result = await run();
    return { result, thrown };
  } finally {
    session.post('Debugger.setPauseOnExceptions', { state: 'none' });
    session.post('Debugger.disable');
    session.disconnect();
  }
}

const thrownIn = (thrown: Thrown[], name: string) =>
  thrown.filter((exception) => exception.frames.includes(name));

const nodes: SvcNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((node) => node.stop()));
});

describe('a new connection without exceptions in Noise', () => {
  it('connects, proves both peers and carries streams, no exception from HKDF or framing', async () => {
    const seller = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('buyer');
    nodes.push(buyer, seller);
    const address = seller.libp2p.getMultiaddrs()[0]!;
    // A first connection warms the code up; the one counted is the second, by PeerId.
    await buyer.libp2p.dial(address);
    await buyer.libp2p.hangUp(seller.libp2pPeerId);

    const { result, thrown } = await thrownDuring(async () => {
      const connection = await buyer.libp2p.dial(seller.libp2pPeerId);
      // Several reads on the secured connection, both ways.
      const rtts = [];
      for (let i = 0; i < 3; i++)
        rtts.push(await buyer.libp2p.services.ping.ping(connection.remoteAddr));
      return { connection, rtts };
    });

    expect(result.connection.remotePeer.equals(seller.libp2pPeerId)).toBe(true);
    expect(result.rtts).toHaveLength(3);
    const atSeller = seller.libp2p.getConnections(buyer.libp2pPeerId);
    expect(atSeller.map((connection) => connection.remotePeer.toString())).toEqual([
      buyer.libp2pPeerId.toString(),
    ]);
    // Node's hkdfSync threw (and caught) a TypeError per call given bytes rather than a KeyObject.
    expect(thrownIn(thrown, 'hkdfSync')).toEqual([]);
    // The decoder of Noise messages threw (and caught) a RangeError per read ending on a boundary
    // (or a byte after one). What is left: at each end, the read of the first messages, decoded
    // before noiseFraming.ts can give the library's decoder its own length decoder.
    const decoding = thrownIn(thrown, 'noiseOnMessageDecrypt');
    expect(decoding.length).toBeLessThanOrEqual(2);
    expect(decoding.every((exception) => exception.frames.includes('uint16BEDecode'))).toBe(true);
  });
});
