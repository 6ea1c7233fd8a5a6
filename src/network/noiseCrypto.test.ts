import { randomBytes } from 'node:crypto';
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
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
});
