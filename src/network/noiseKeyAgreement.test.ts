import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
import { Uint8ArrayList } from 'uint8arraylist';
import { describe, expect, it } from 'vitest';
import { keyAgreement } from './noiseKeyAgreement.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('Noise X25519 with kept key objects', () => {
  it('agrees on the secret the library computes, from either side, again and again', () => {
    for (let i = 0; i < 10; i++) {
      const ours = keyAgreement.generateX25519KeyPair();
      const theirs = defaultCrypto.generateX25519KeyPair();
      expect(ours.publicKey.byteLength).toBe(32);
      expect(ours.privateKey.byteLength).toBe(32);
      // Our public key is the library's for our private key: the pair belongs together.
      expect(hex(defaultCrypto.generateX25519KeyPairFromSeed(ours.privateKey).publicKey)).toBe(
        hex(ours.publicKey),
      );
      const expected = hex(
        defaultCrypto.generateX25519SharedKey(theirs.privateKey, ours.publicKey),
      );
      for (let twice = 0; twice < 2; twice++) {
        expect(hex(keyAgreement.generateX25519SharedKey(ours.privateKey, theirs.publicKey))).toBe(
          expected,
        );
        expect(
          hex(
            keyAgreement.generateX25519SharedKey(
              ours.privateKey,
              new Uint8ArrayList(theirs.publicKey.subarray(0, 7), theirs.publicKey.subarray(7)),
            ),
          ),
        ).toBe(expected);
      }
    }
  });

  it('uses the bytes as they are now when an array was reused for another key', () => {
    const first = defaultCrypto.generateX25519KeyPair();
    const second = defaultCrypto.generateX25519KeyPair();
    const ours = keyAgreement.generateX25519KeyPair();
    const remote = new Uint8Array(first.publicKey);
    keyAgreement.generateX25519SharedKey(ours.privateKey, remote);
    remote.set(second.publicKey);
    expect(hex(keyAgreement.generateX25519SharedKey(ours.privateKey, remote))).toBe(
      hex(defaultCrypto.generateX25519SharedKey(second.privateKey, ours.publicKey)),
    );
    // A private key array overwritten with another key: the other key is used.
    const mine = keyAgreement.generateX25519KeyPair();
    mine.privateKey.set(second.privateKey);
    expect(hex(keyAgreement.generateX25519SharedKey(mine.privateKey, first.publicKey))).toBe(
      hex(defaultCrypto.generateX25519SharedKey(second.privateKey, first.publicKey)),
    );
  });

  it('hands out each key pair once, also those made ahead, each a true pair', async () => {
    keyAgreement.generateX25519KeyPair();
    // Long enough for the pairs made ahead to be ready.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const pairs = Array.from({ length: 12 }, () => keyAgreement.generateX25519KeyPair());
    expect(new Set(pairs.map((pair) => hex(pair.publicKey))).size).toBe(pairs.length);
    expect(new Set(pairs.map((pair) => hex(pair.privateKey))).size).toBe(pairs.length);
    const theirs = defaultCrypto.generateX25519KeyPair();
    for (const pair of pairs) {
      expect(hex(defaultCrypto.generateX25519KeyPairFromSeed(pair.privateKey).publicKey)).toBe(
        hex(pair.publicKey),
      );
      expect(hex(keyAgreement.generateX25519SharedKey(pair.privateKey, theirs.publicKey))).toBe(
        hex(defaultCrypto.generateX25519SharedKey(theirs.privateKey, pair.publicKey)),
      );
    }
  });
});
