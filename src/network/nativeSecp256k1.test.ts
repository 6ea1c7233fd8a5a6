import { createHash } from 'node:crypto';
import { privateKeyFromRaw, publicKeyFromRaw } from '@libp2p/crypto/keys';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { Uint8ArrayList } from 'uint8arraylist';
import { describe, expect, it } from 'vitest';
import { useNativeSecp256k1 } from './nativeSecp256k1.js';

const N = secp256k1.Point.CURVE().n;
const digest = (message: Uint8Array) => createHash('sha256').update(message).digest();

/** The high-S twin of a low-S DER signature (valid to OpenSSL, refused by noble). */
function highS(der: Uint8Array): Uint8Array {
  const sig = secp256k1.Signature.fromBytes(der, 'der');
  return new secp256k1.Signature(sig.r, N - sig.s).toBytes('der');
}

describe('native secp256k1 signatures', () => {
  useNativeSecp256k1();
  const message = new TextEncoder().encode('noise handshake payload');

  it('signs what noble verifies, low-S, over the SHA-256 of the message', () => {
    for (let i = 0; i < 20; i++) {
      const secret = secp256k1.utils.randomSecretKey();
      const sig = privateKeyFromRaw(secret).sign(message) as Uint8Array;
      const publicKey = secp256k1.getPublicKey(secret, true);
      expect(
        secp256k1.verify(sig, digest(message), publicKey, { prehash: false, format: 'der' }),
      ).toBe(true);
      expect(secp256k1.Signature.fromBytes(sig, 'der').hasHighS()).toBe(false);
    }
  });

  it('verifies what noble signs and refuses what noble refuses', () => {
    const secret = secp256k1.utils.randomSecretKey();
    const sig = secp256k1.sign(digest(message), secret, { prehash: false, format: 'der' });
    const key = publicKeyFromRaw(secp256k1.getPublicKey(secret, true));
    expect(key.verify(message, sig)).toBe(true);
    expect(key.verify(new TextEncoder().encode('another payload'), sig)).toBe(false);
    expect(key.verify(message, highS(sig))).toBe(false);
    expect(key.verify(message, sig.subarray(0, sig.length - 1))).toBe(false);
    const other = publicKeyFromRaw(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true));
    expect(other.verify(message, sig)).toBe(false);
  });

  it('takes a message in parts as the whole', () => {
    const key = privateKeyFromRaw(secp256k1.utils.randomSecretKey());
    const parts = new Uint8ArrayList(message.subarray(0, 5), message.subarray(5));
    const sig = key.sign(parts as unknown as Parameters<typeof key.sign>[0]) as Uint8Array;
    expect(key.publicKey.verify(message, sig)).toBe(true);
  });
});
