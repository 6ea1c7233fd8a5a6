import { createHash } from 'node:crypto';
import { privateKeyFromRaw, publicKeyFromRaw } from '@libp2p/crypto/keys';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { Uint8ArrayList } from 'uint8arraylist';
import { describe, expect, it } from 'vitest';
import { Recent, useFastSecp256k1 } from './fastSecp256k1.js';

const N = secp256k1.Point.CURVE().n;
const digest = (message: Uint8Array) => createHash('sha256').update(message).digest();
const nobleSign = (message: Uint8Array, secret: Uint8Array) =>
  secp256k1.sign(digest(message), secret, { prehash: false, format: 'der' });

/** The high-S twin of a low-S DER signature (valid to OpenSSL, refused by noble). */
function highS(der: Uint8Array): Uint8Array {
  const sig = secp256k1.Signature.fromBytes(der, 'der');
  return new secp256k1.Signature(sig.r, N - sig.s).toBytes('der');
}

/** The same signature with r given a needless leading zero (not strict DER: noble refuses it). */
function paddedR(der: Uint8Array): Uint8Array {
  const rLength = der[3] ?? 0;
  const r = der.subarray(4, 4 + rLength);
  const rest = der.subarray(4 + rLength);
  const body = Buffer.concat([Buffer.from([0x02, rLength + 1, 0]), r, rest]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

describe('secp256k1 signatures in WebAssembly', () => {
  useFastSecp256k1();
  const message = new TextEncoder().encode('noise handshake payload');

  it('signs the bytes noble signs: low-S DER over the SHA-256 of the message', () => {
    for (let i = 0; i < 20; i++) {
      const secret = secp256k1.utils.randomSecretKey();
      const sig = privateKeyFromRaw(secret).sign(message) as Uint8Array;
      expect(Buffer.from(sig).toString('hex')).toBe(
        Buffer.from(nobleSign(message, secret)).toString('hex'),
      );
      // Again (remembered): the same bytes, and a copy the caller may change.
      const again = privateKeyFromRaw(secret).sign(message) as Uint8Array;
      expect(again).toEqual(sig);
      again.fill(0);
      expect(privateKeyFromRaw(secret).sign(message)).toEqual(sig);
    }
  });

  it('verifies what noble signs and refuses what noble refuses', () => {
    const secret = secp256k1.utils.randomSecretKey();
    const sig = nobleSign(message, secret);
    const key = publicKeyFromRaw(secp256k1.getPublicKey(secret, true));
    // The key class also takes the 65-byte form (publicKeyFromRaw would read it as RSA).
    const SameClass = key.constructor as new (bytes: Uint8Array) => typeof key;
    const uncompressed = new SameClass(secp256k1.getPublicKey(secret, false));
    const refusals = [
      [new TextEncoder().encode('another payload'), sig],
      [message, highS(sig)],
      [message, paddedR(sig)],
      [message, sig.subarray(0, sig.length - 1)],
      [message, new Uint8Array(0)],
    ] as const;
    for (const [data, bad] of refusals) {
      expect(secp256k1.verify(bad, digest(data), key.raw, { prehash: false, format: 'der' })).toBe(
        false,
      );
      expect(key.verify(data, bad)).toBe(false);
    }
    expect(key.verify(message, sig)).toBe(true);
    expect(uncompressed.verify(message, sig)).toBe(true);
    const other = publicKeyFromRaw(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true));
    expect(other.verify(message, sig)).toBe(false);
  });

  it('remembers only exact valid triples: a valid signature seen before passes nothing else', () => {
    const secret = secp256k1.utils.randomSecretKey();
    const sig = nobleSign(message, secret);
    const key = publicKeyFromRaw(secp256k1.getPublicKey(secret, true));
    expect(key.verify(message, sig)).toBe(true);
    expect(key.verify(message, sig)).toBe(true);
    // Same message, another key's valid signature; same key, another message; the twin.
    const stranger = secp256k1.utils.randomSecretKey();
    expect(key.verify(message, nobleSign(message, stranger))).toBe(false);
    expect(key.verify(new TextEncoder().encode('payload 2'), sig)).toBe(false);
    expect(key.verify(message, highS(sig))).toBe(false);
    const strangerKey = publicKeyFromRaw(secp256k1.getPublicKey(stranger, true));
    expect(strangerKey.verify(message, sig)).toBe(false);
  });

  it('takes a message in parts as the whole', () => {
    const key = privateKeyFromRaw(secp256k1.utils.randomSecretKey());
    const parts = new Uint8ArrayList(message.subarray(0, 5), message.subarray(5));
    const sig = key.sign(parts as unknown as Parameters<typeof key.sign>[0]) as Uint8Array;
    expect(key.publicKey.verify(message, sig)).toBe(true);
    const other = new Uint8ArrayList(message.subarray(0, 9), message.subarray(9));
    const data = other as unknown as Parameters<typeof key.publicKey.verify>[0];
    expect(key.publicKey.verify(data, sig)).toBe(true);
  });
});

describe('Recent', () => {
  it('keeps the most recently used entries up to its bound', () => {
    const recent = new Recent<number>(3);
    for (let i = 0; i < 10; i++) recent.set(`k${i}`, i);
    expect(recent.size).toBe(3);
    expect(recent.get('k6')).toBeUndefined();
    expect(recent.get('k7')).toBe(7);
    // k7 was just used: the next entry pushes out k8, the oldest.
    recent.set('k10', 10);
    expect(recent.size).toBe(3);
    expect(recent.get('k8')).toBeUndefined();
    expect([recent.get('k7'), recent.get('k9'), recent.get('k10')]).toEqual([7, 9, 10]);
  });
});
