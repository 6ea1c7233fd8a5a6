/**
 * Noise's ChaCha20-Poly1305 through node's crypto without re-importing the key per message.
 * `@chainsafe/libp2p-noise` uses node's native cipher for messages of 1,200 bytes or more (its
 * wasm one below), but passes the raw 32-byte key to `createCipheriv` each time, which builds
 * a new KeyObject per message (~2.5 % of the buyer's CPU per request). Here the KeyObject is
 * made once per session key and reused; the output bytes are identical (same cipher, key,
 * nonce, associated data and tag length). Non-contiguous messages (a `Uint8ArrayList`, which
 * is what most large Noise messages are) take the same path piece by piece and come back as one
 * buffer. Smaller messages go to the library's own (wasm) implementation as before.
 *
 * The handshake's HKDF (five per side and connection) is one native `hkdfSync` call instead of
 * the library's JavaScript HMAC-SHA-256 (`@noble/hashes`), which a new connection runs cold:
 * Noise's HKDF is RFC 5869's with an empty info and 96 bytes out, cut into three keys, so the
 * keys are the same (docs/decisions/210-a-new-connection-with-an-honest-distance.md).
 */
import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  hkdfSync,
  type KeyObject,
} from 'node:crypto';
import type { ICryptoInterface } from '@chainsafe/libp2p-noise';
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
import { keyAgreement } from './noiseKeyAgreement.js';

/** Below this the library's wasm implementation is faster (its own threshold). */
const NATIVE_FROM_BYTES = 1200;
const TAG_BYTES = 16;

interface CachedKey {
  bytes: Buffer;
  key: KeyObject;
}

const keys = new WeakMap<Uint8Array, CachedKey>();

/** The KeyObject of `k`, checked against a copy of its bytes (the array could be reused). */
function keyOf(k: Uint8Array): KeyObject {
  const cached = keys.get(k);
  if (cached?.bytes.equals(k)) return cached.key;
  const bytes = Buffer.from(k);
  const key = createSecretKey(bytes);
  keys.set(k, { bytes, key });
  return key;
}

type Encrypt = ICryptoInterface['chaCha20Poly1305Encrypt'];
type Decrypt = ICryptoInterface['chaCha20Poly1305Decrypt'];

const encrypt: Encrypt = (plaintext, nonce, ad, k) => {
  if (plaintext.byteLength < NATIVE_FROM_BYTES) {
    return defaultCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, ad, k);
  }
  const cipher = createCipheriv('chacha20-poly1305', keyOf(k), nonce, {
    authTagLength: TAG_BYTES,
  });
  cipher.setAAD(ad, { plaintextLength: plaintext.byteLength });
  if (plaintext instanceof Uint8Array) {
    const updated = cipher.update(plaintext);
    const final = cipher.final();
    const tag = cipher.getAuthTag();
    return Buffer.concat([updated, final, tag], updated.byteLength + final.byteLength + TAG_BYTES);
  }
  const parts: Uint8Array[] = [];
  for (const piece of plaintext) parts.push(cipher.update(piece));
  parts.push(cipher.final(), cipher.getAuthTag());
  return Buffer.concat(parts, plaintext.byteLength + TAG_BYTES);
};

const decrypt: Decrypt = (ciphertext, nonce, ad, k, dst) => {
  if (ciphertext.byteLength < NATIVE_FROM_BYTES) {
    return defaultCrypto.chaCha20Poly1305Decrypt(ciphertext, nonce, ad, k, dst);
  }
  const length = ciphertext.byteLength - TAG_BYTES;
  const decipher = createDecipheriv('chacha20-poly1305', keyOf(k), nonce, {
    authTagLength: TAG_BYTES,
  });
  decipher.setAAD(ad, { plaintextLength: length });
  decipher.setAuthTag(ciphertext.subarray(length));
  if (ciphertext instanceof Uint8Array) {
    const output = decipher.update(ciphertext.subarray(0, length));
    const final = decipher.final();
    return final.byteLength > 0
      ? Buffer.concat([output, final], output.byteLength + final.byteLength)
      : output;
  }
  const parts: Uint8Array[] = [];
  for (const piece of ciphertext.sublist(0, length)) parts.push(decipher.update(piece));
  parts.push(decipher.final());
  return Buffer.concat(parts, length);
};

const NO_INFO = new Uint8Array(0);

/**
 * HKDF-SHA-256 with the chaining key `ck` as salt and three 32-byte outputs (Noise's HKDF). The
 * input key goes in as a KeyObject: given bytes, `hkdfSync` first asks whether they are a
 * KeyObject, and Node answers that by catching an exception it throws for every non-KeyObject,
 * stack trace included (as much CPU as the derivation itself, eight times per connection;
 * docs/decisions/213-what-a-new-connection-still-costs.md).
 */
const getHKDF: ICryptoInterface['getHKDF'] = (ck, ikm) => {
  const okm = new Uint8Array(hkdfSync('sha256', createSecretKey(ikm), ck, NO_INFO, 96));
  return [okm.subarray(0, 32), okm.subarray(32, 64), okm.subarray(64, 96)];
};

/** The crypto to pass as `noise({ crypto })`, with the handshake's key work of noiseKeyAgreement.ts. */
export const noiseCrypto: ICryptoInterface = {
  ...defaultCrypto,
  ...keyAgreement,
  getHKDF,
  chaCha20Poly1305Encrypt: encrypt,
  chaCha20Poly1305Decrypt: decrypt,
};
