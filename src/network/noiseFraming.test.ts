import { randomBytes } from 'node:crypto';
import type { NoiseComponents } from '@chainsafe/libp2p-noise';
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { MessageStream } from '@libp2p/interface';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { streamPair } from '@libp2p/utils';
import { describe, expect, it } from 'vitest';
import { noiseCrypto } from './noiseCrypto.js';
import { quietNoise } from './noiseFraming.js';
import { quietComponentLogger } from './quietLogger.js';

async function components(): Promise<NoiseComponents> {
  const privateKey = await generateKeyPair('Ed25519');
  return {
    privateKey,
    peerId: peerIdFromPrivateKey(privateKey),
    logger: quietComponentLogger,
    upgrader: {} as NoiseComponents['upgrader'],
  };
}

/** Everything `stream` receives until `bytes` have arrived. */
function received(stream: MessageStream, bytes: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let length = 0;
    stream.addEventListener('message', (event) => {
      const data = event.data instanceof Uint8Array ? event.data : event.data.subarray();
      parts.push(Buffer.from(data));
      length += data.byteLength;
      if (length >= bytes) resolve(Buffer.concat(parts));
    });
  });
}

describe('noise with a throw-once frame decoder', () => {
  it('carries messages of every size both ways after a real handshake', async () => {
    const [a, b] = await streamPair();
    const [left, right] = await Promise.all([components(), components()]);
    const [outbound, inbound] = await Promise.all([
      quietNoise({ crypto: noiseCrypto })(left).secureOutbound(a, {
        remotePeer: right.peerId,
        skipStreamMuxerNegotiation: true,
      }),
      quietNoise({ crypto: noiseCrypto })(right).secureInbound(b, {
        skipStreamMuxerNegotiation: true,
      }),
    ]);
    expect(inbound.remotePeer.equals(left.peerId)).toBe(true);
    // The library's private decoder was found and given the quiet length decoder.
    const decoder = (inbound.connection as unknown as { decoder: { lengthDecoder: unknown } })
      .decoder;
    expect(typeof decoder.lengthDecoder).toBe('function');
    expect((decoder.lengthDecoder as { name: string }).name).toBe('lengthDecoder');

    const sizes = [1, 100, 1199, 1200, 5000, 70_000, 200_000];
    const sent = sizes.map((size) => randomBytes(size));
    const total = sizes.reduce((sum, size) => sum + size, 0);
    const atInbound = received(inbound.connection, total);
    for (const message of sent) outbound.connection.send(message);
    expect((await atInbound).equals(Buffer.concat(sent))).toBe(true);

    const back = randomBytes(3000);
    const atOutbound = received(outbound.connection, back.byteLength);
    inbound.connection.send(back);
    expect((await atOutbound).equals(back)).toBe(true);
    await Promise.all([outbound.connection.close(), inbound.connection.close()]);
  });
});
