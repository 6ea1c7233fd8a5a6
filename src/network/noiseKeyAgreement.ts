/**
 * Noise's X25519 without re-importing keys. `@chainsafe/libp2p-noise` hands each X25519 key to
 * node's crypto as raw bytes: a new key pair is exported to DER and cut to its raw bytes, and
 * each of the handshake's three Diffie-Hellman operations per side wraps both keys in DER again
 * and imports them (`createPrivateKey` alone is ~0.2 ms, four times the Diffie-Hellman itself).
 * Here a key pair made here keeps its private KeyObject, found again from the raw bytes Noise
 * passes back (the node's static key on every connection, the ephemeral one twice), and the
 * remote's ephemeral key, used twice, is imported once, from PEM. The bytes out are the same as
 * the library's (docs/decisions/194-a-new-connection-without-repeated-work.md).
 */
import {
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
import type { ICryptoInterface } from '@chainsafe/libp2p-noise';
import type { Uint8ArrayList } from 'uint8arraylist';

/** DER before the 32 raw bytes of an X25519 public (SPKI) and private (PKCS#8) key. */
const SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

interface Held {
  /** A copy of the bytes the key was made from: the array passed could have been reused. */
  bytes: Buffer;
  key: KeyObject;
}

/** By the array (or list: Noise reads the remote's keys as views of what it received) given. */
const privateKeys = new WeakMap<object, Held>();
const publicKeys = new WeakMap<object, Held>();

/** The KeyObject held for `value` (this very object, same content), else a new one, held. */
function keyOf(
  held: WeakMap<object, Held>,
  value: Uint8Array | Uint8ArrayList,
  make: (der: Buffer) => KeyObject,
  prefix: Buffer,
): KeyObject {
  const bytes = value instanceof Uint8Array ? value : value.subarray();
  const known = held.get(value);
  if (known?.bytes.equals(bytes)) return known.key;
  const copy = Buffer.from(bytes);
  const key = make(Buffer.concat([prefix, copy]));
  held.set(value, { bytes: copy, key });
  return key;
}

/**
 * A key is imported from PEM: the same DER in base64, but OpenSSL reads PEM with the one decoder
 * its header names where raw DER is tried against every decoder (~3 times slower here).
 */
const pem = (label: string, der: Buffer) =>
  `-----BEGIN ${label}-----\n${der.toString('base64')}\n-----END ${label}-----\n`;
const importPrivate = (der: Buffer) => createPrivateKey(pem('PRIVATE KEY', der));
const importPublic = (der: Buffer) => createPublicKey(pem('PUBLIC KEY', der));

type KeyPair = ReturnType<ICryptoInterface['generateX25519KeyPair']>;

function generateX25519KeyPair(): KeyPair {
  const pair = generateKeyPairSync('x25519');
  // JWK is the cheap way out of a KeyObject (no DER encoder): `d` and `x` are the raw bytes.
  const privateKey = Buffer.from(pair.privateKey.export({ format: 'jwk' }).d ?? '', 'base64url');
  const publicKey = Buffer.from(pair.publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
  privateKeys.set(privateKey, { bytes: Buffer.from(privateKey), key: pair.privateKey });
  return { publicKey, privateKey };
}

const generateX25519SharedKey: ICryptoInterface['generateX25519SharedKey'] = (
  privateKey,
  publicKey,
) =>
  diffieHellman({
    privateKey: keyOf(privateKeys, privateKey, importPrivate, PKCS8_PREFIX),
    publicKey: keyOf(publicKeys, publicKey, importPublic, SPKI_PREFIX),
  });

/** The parts of Noise's crypto interface this file provides. */
export const keyAgreement: Pick<
  ICryptoInterface,
  'generateX25519KeyPair' | 'generateX25519SharedKey'
> = { generateX25519KeyPair, generateX25519SharedKey };
