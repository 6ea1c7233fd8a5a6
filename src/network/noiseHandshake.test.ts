/**
 * The Noise handshake as the node runs it (our key agreement, signatures and their memories):
 * the remote's identity is still proven by its payload signature and by its static key, on a
 * first connection and on the next ones, which hit the remembered signatures.
 */
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { PrivateKey } from '@libp2p/interface';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { multiaddrConnectionPair } from '@libp2p/utils';
import { describe, expect, it } from 'vitest';
import { useFastSecp256k1 } from './fastSecp256k1.js';
import { noiseCrypto } from './noiseCrypto.js';
import { quietNoise } from './noiseFraming.js';
import { quietComponentLogger } from './quietLogger.js';

type Encrypter = ReturnType<ReturnType<typeof quietNoise>>;

function encrypterOf(privateKey: PrivateKey): Encrypter {
  return quietNoise({ crypto: noiseCrypto })({
    privateKey,
    peerId: peerIdFromPrivateKey(privateKey),
    logger: quietComponentLogger,
    upgrader: { getStreamMuxers: () => new Map() } as never,
  });
}

/**
 * One handshake over an in-memory connection (`remotePeer`: whom the initiator dials); what each
 * side learned of the other. A side that fails closes the connection, as libp2p does.
 */
async function handshake(
  initiator: Encrypter,
  responder: Encrypter,
  remotePeer?: ReturnType<typeof peerIdFromPrivateKey>,
) {
  const [outbound, inbound] = multiaddrConnectionPair();
  const options = { signal: AbortSignal.timeout(5_000), skipStreamMuxerNegotiation: true };
  const closeAll = (error: unknown) => {
    outbound.abort(new Error('closed'));
    inbound.abort(new Error('closed'));
    throw error;
  };
  const [out, into] = await Promise.allSettled([
    initiator
      .secureOutbound(outbound, { ...options, ...(remotePeer ? { remotePeer } : {}) })
      .catch(closeAll),
    responder.secureInbound(inbound, options).catch(closeAll),
  ]);
  outbound.abort(new Error('done'));
  inbound.abort(new Error('done'));
  return { out, into };
}

/** A key that shows `shown`'s public key but signs with `sign` (an impostor's identity). */
function impostorKey(shown: PrivateKey, sign: PrivateKey['sign']): PrivateKey {
  return {
    type: shown.type,
    raw: new Uint8Array(32),
    publicKey: shown.publicKey,
    equals: (other) => shown.equals(other),
    sign,
  } as PrivateKey;
}

describe('Noise handshake identity', () => {
  useFastSecp256k1();

  it('each side learns the other identity, again on a second connection', async () => {
    const a = await generateKeyPair('secp256k1');
    const b = await generateKeyPair('secp256k1');
    const [alice, bob] = [encrypterOf(a), encrypterOf(b)];
    for (let i = 0; i < 2; i++) {
      const { out, into } = await handshake(alice, bob);
      expect(
        out.status === 'fulfilled' && out.value.remotePeer.equals(peerIdFromPrivateKey(b)),
      ).toBe(true);
      expect(
        into.status === 'fulfilled' && into.value.remotePeer.equals(peerIdFromPrivateKey(a)),
      ).toBe(true);
    }
  });

  it('refuses a peer that shows a known identity key but signs with another', async () => {
    const a = await generateKeyPair('secp256k1');
    const victim = await generateKeyPair('secp256k1');
    const mallory = await generateKeyPair('secp256k1');
    const alice = encrypterOf(a);
    // Alice has met the victim: its signature is remembered as valid.
    expect((await handshake(alice, encrypterOf(victim))).out.status).toBe('fulfilled');
    const { out } = await handshake(
      alice,
      encrypterOf(impostorKey(victim, (message) => mallory.sign(message))),
    );
    expect(out.status).toBe('rejected');
    expect(out.status === 'rejected' && String(out.reason)).toMatch(/Invalid payload signature/);
  });

  it("refuses a replay of a known peer's valid signature without its static key", async () => {
    const a = await generateKeyPair('secp256k1');
    const victim = await generateKeyPair('secp256k1');
    const alice = encrypterOf(a);
    type WithStatic = Encrypter & { staticKey: { publicKey: Uint8Array; privateKey: Uint8Array } };
    const real = encrypterOf(victim) as WithStatic;
    expect((await handshake(alice, real)).out.status).toBe('fulfilled');
    // What the victim sent: its signature over its static key (signing is deterministic).
    const prefix = new TextEncoder().encode('noise-libp2p-static-key:');
    const sent = await victim.sign(Buffer.concat([prefix, real.staticKey.publicKey]));
    // Mallory shows the victim's identity and static public key and replays that signature (the
    // same bytes, remembered as valid), but holds only its own static private key.
    const mallory = encrypterOf(impostorKey(victim, () => sent)) as WithStatic;
    mallory.staticKey = { ...mallory.staticKey, publicKey: real.staticKey.publicKey };
    const { out, into } = await handshake(alice, mallory);
    expect(out.status).toBe('rejected');
    expect(into.status).toBe('rejected');
  });

  it('refuses a peer other than the one dialled', async () => {
    const a = await generateKeyPair('secp256k1');
    const b = await generateKeyPair('secp256k1');
    const expected = await generateKeyPair('secp256k1');
    const { out } = await handshake(encrypterOf(a), encrypterOf(b), peerIdFromPrivateKey(expected));
    expect(out.status === 'rejected' && String(out.reason)).toMatch(/does not match expected/);
  });
});
