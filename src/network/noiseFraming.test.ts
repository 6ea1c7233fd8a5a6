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

/** A real Noise handshake over a stream pair; `a` is the outbound side's raw stream. */
async function handshake() {
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
  return { a, outbound, inbound, left };
}

describe('noise with a throw-once frame decoder', () => {
  it('carries messages of every size both ways after a real handshake', async () => {
    const { outbound, inbound, left } = await handshake();
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

/** A secured pair whose outbound side reports the Noise messages it writes. */
async function securedPair() {
  const { a, outbound, inbound } = await handshake();
  // Noise messages are [u16 length][ciphertext]: count them in what reaches the wire.
  const wire: Buffer[] = [];
  const send = a.send.bind(a);
  a.send = (data: Parameters<typeof a.send>[0]) => {
    wire.push(Buffer.from(data instanceof Uint8Array ? data : data.subarray()));
    return send(data);
  };
  const messages = () => {
    const bytes = Buffer.concat(wire);
    let count = 0;
    for (let offset = 0; offset < bytes.byteLength; offset += 2 + bytes.readUInt16BE(offset)) {
      count++;
    }
    return count;
  };
  return { raw: a, outbound: outbound.connection, inbound: inbound.connection, messages };
}

const nextPhase = () => new Promise((resolve) => setImmediate(resolve));

describe('noise writes batched per event-loop phase', () => {
  it('encrypts the sends of one phase as one message, bytes and order intact', async () => {
    const { outbound, inbound, messages } = await securedPair();
    const sent = [1, 12, 40, 300, 1199, 1300].map((size) => randomBytes(size));
    const total = sent.reduce((sum, part) => sum + part.byteLength, 0);
    const arriving = received(inbound, total);
    for (const part of sent.slice(0, 3)) expect(outbound.send(part)).toBe(true);
    // Sends made a few promise hops later in the same phase join the same message.
    await Promise.resolve();
    for (const part of sent.slice(3)) outbound.send(part);
    expect(messages()).toBe(0);
    await nextPhase();
    expect(messages()).toBe(1);
    expect((await arriving).equals(Buffer.concat(sent))).toBe(true);
    await Promise.all([outbound.close(), inbound.close()]);
  });

  it('sends one message per phase, large sends at once, and what is queued on close', async () => {
    const { outbound, inbound, messages } = await securedPair();
    const first = randomBytes(100);
    const second = randomBytes(100);
    const large = randomBytes(70_000);
    const last = randomBytes(10);
    const total = first.byteLength + second.byteLength + large.byteLength + last.byteLength;
    const arriving = received(inbound, total);
    outbound.send(first);
    await nextPhase();
    outbound.send(second);
    await nextPhase();
    expect(messages()).toBe(2);
    // More than one message's worth: encrypted and written in the same call (two messages).
    outbound.send(large);
    expect(messages()).toBe(4);
    outbound.send(last);
    await outbound.close();
    expect(messages()).toBe(5);
    expect((await arriving).equals(Buffer.concat([first, second, large, last]))).toBe(true);
    await inbound.close();
  });

  it('sends what is queued when the connection under it is closed (as libp2p closes one)', async () => {
    const { raw, inbound, outbound } = await securedPair();
    const last = randomBytes(50);
    const arriving = received(inbound, last.byteLength);
    outbound.send(last);
    await raw.close();
    expect((await arriving).equals(last)).toBe(true);
  });
});
