import { randomBytes } from 'node:crypto';
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
import { Uint8ArrayList } from 'uint8arraylist';
import { describe, expect, it } from 'vitest';
import { noiseCrypto } from './noiseCrypto.js';

const bytes = (value: Uint8Array | { subarray(): Uint8Array }) =>
  Buffer.from(value instanceof Uint8Array ? value : value.subarray());

describe('noise crypto with reused key objects', () => {
  it.each([0, 100, 1199, 1200, 1400, 70_000])(
    'encrypts %i bytes exactly as the library does, and decrypts them back',
    (size) => {
      const k = randomBytes(32);
      const nonce = randomBytes(12);
      const ad = randomBytes(32);
      const plaintext = randomBytes(size);
      const ours = noiseCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, ad, k);
      const theirs = defaultCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, ad, k);
      expect(bytes(ours).equals(bytes(theirs))).toBe(true);
      const back = noiseCrypto.chaCha20Poly1305Decrypt(bytes(ours), nonce, ad, k);
      expect(bytes(back).equals(plaintext)).toBe(true);
    },
  );

  it.each([
    [100, 1000],
    [700, 700],
    [1, 1199, 40_000],
  ])(
    'encrypts and decrypts a message in pieces (%i, %i …) exactly as the library does',
    (...sizes) => {
      const k = randomBytes(32);
      const nonce = randomBytes(12);
      const ad = randomBytes(32);
      const pieces = sizes.map((size) => randomBytes(size));
      const plaintext = Buffer.concat(pieces);
      const ours = noiseCrypto.chaCha20Poly1305Encrypt(new Uint8ArrayList(...pieces), nonce, ad, k);
      const theirs = defaultCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, ad, k);
      expect(bytes(ours).equals(bytes(theirs))).toBe(true);
      const sealed = bytes(ours);
      const split = new Uint8ArrayList(sealed.subarray(0, 5), sealed.subarray(5));
      const back = noiseCrypto.chaCha20Poly1305Decrypt(split, nonce, ad, k);
      expect(bytes(back).equals(plaintext)).toBe(true);
      const tampered = Buffer.from(sealed);
      tampered[3] = (tampered[3] ?? 0) ^ 1;
      expect(() =>
        noiseCrypto.chaCha20Poly1305Decrypt(new Uint8ArrayList(tampered), nonce, ad, k),
      ).toThrow();
    },
  );

  it('refuses a tampered message', () => {
    const k = randomBytes(32);
    const nonce = randomBytes(12);
    const sealed = bytes(
      noiseCrypto.chaCha20Poly1305Encrypt(randomBytes(2000), nonce, new Uint8Array(0), k),
    );
    sealed[10] = (sealed[10] ?? 0) ^ 1;
    expect(() =>
      noiseCrypto.chaCha20Poly1305Decrypt(sealed, nonce, new Uint8Array(0), k),
    ).toThrow();
  });

  it('notices a key array whose bytes changed', () => {
    const k = randomBytes(32);
    const nonce = randomBytes(12);
    const plaintext = randomBytes(1500);
    noiseCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, new Uint8Array(0), k);
    k[0] = (k[0] ?? 0) ^ 0xff;
    const ours = noiseCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, new Uint8Array(0), k);
    const theirs = defaultCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, new Uint8Array(0), k);
    expect(bytes(ours).equals(bytes(theirs))).toBe(true);
  });

  it.each([0, 32, 64])(
    'derives the keys of a %i-byte input exactly as the library does, and other keys for other input',
    (size) => {
      const ck = randomBytes(32);
      const ikm = randomBytes(size);
      const ours = noiseCrypto.getHKDF(ck, ikm).map(bytes);
      const theirs = defaultCrypto.getHKDF(ck, ikm).map(bytes);
      expect(ours.map((key) => key.byteLength)).toEqual([32, 32, 32]);
      expect(ours.map((key) => key.toString('hex'))).toEqual(
        theirs.map((key) => key.toString('hex')),
      );
      const otherCk = Buffer.from(ck);
      otherCk[0] = (otherCk[0] ?? 0) ^ 1;
      expect(bytes(noiseCrypto.getHKDF(otherCk, ikm)[0]).equals(ours[0]!)).toBe(false);
    },
  );
});
