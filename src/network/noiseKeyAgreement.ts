/**
 * Noise's X25519 without re-importing keys. `@chainsafe/libp2p-noise` hands each X25519 key to
 * node's crypto as raw bytes: a new key pair is exported to DER and cut to its raw bytes, and
 * each of the handshake's three Diffie-Hellman operations per side wraps both keys in DER again
 * and imports them (`createPrivateKey` alone is ~0.2 ms, four times the Diffie-Hellman itself).
 * Here a key pair made here keeps its private KeyObject, found again from the raw bytes Noise
 * passes back (the node's static key on every connection, the ephemeral one twice), and a remote
 * public key is imported once, from PEM, and kept by its bytes: the remote's ephemeral key is
 * used twice, and a peer that connects again shows the same static key. The bytes out are the
 * same as the library's (docs/decisions/194-a-new-connection-without-repeated-work.md).
 *
 * Each handshake makes an ephemeral key pair (~0.15 ms: generation and export); a few are made
 * ahead, once the request that follows the handshake which took one is done, and each is handed
 * out once, so a handshake finds its key ready (docs/decisions/199-ephemeral-keys-made-ahead.md).
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
import { Recent } from './fastSecp256k1.js';

/** DER before the 32 raw bytes of an X25519 public (SPKI) and private (PKCS#8) key. */
const SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

interface Held {
  /** A copy of the bytes the key was made from: the array passed could have been reused. */
  bytes: Buffer;
  key: KeyObject;
}

/** Our key pairs' private keys, by the array given out. */
const privateKeys = new WeakMap<object, Held>();
/** Remote public keys by their bytes: a few hundred bytes each. */
const REMOTE_KEYS = 256;
const publicKeys = new Recent<KeyObject>(REMOTE_KEYS);

const bytesOf = (value: Uint8Array | Uint8ArrayList) =>
  value instanceof Uint8Array ? value : value.subarray();

/** The KeyObject of our private key `value` (this very array, same content), else a new one. */
function privateKeyOf(value: Uint8Array | Uint8ArrayList): KeyObject {
  const bytes = bytesOf(value);
  const known = privateKeys.get(value);
  if (known?.bytes.equals(bytes)) return known.key;
  const copy = Buffer.from(bytes);
  const key = importPrivate(Buffer.concat([PKCS8_PREFIX, copy]));
  privateKeys.set(value, { bytes: copy, key });
  return key;
}

/** The KeyObject of a remote public key (Noise reads it as a view of what it received). */
function publicKeyOf(value: Uint8Array | Uint8ArrayList): KeyObject {
  const bytes = Buffer.from(bytesOf(value));
  const id = bytes.toString('hex');
  const known = publicKeys.get(id);
  if (known !== undefined) return known;
  const key = importPublic(Buffer.concat([SPKI_PREFIX, bytes]));
  publicKeys.set(id, key);
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

/** Key pairs made ahead; each is handed out once. */
const SPARE_PAIRS = 4;
/**
 * How long after a pair is taken the first one to replace it is made: after the first request on
 * the connection whose handshake took it. That request runs 10–40 ms locally on a loaded machine;
 * a pair made 20 ms after the take (~0.15 ms of CPU) landed inside it
 * (docs/decisions/213-what-a-new-connection-still-costs.md).
 */
const REFILL_AFTER_MS = 250;
/** Between two pairs of one refill: one per timer turn, never a burst of key generation. */
const NEXT_PAIR_AFTER_MS = 20;
const spare: KeyPair[] = [];
let making: NodeJS.Timeout | undefined;

/** Makes one spare pair, and later the next while fewer than SPARE_PAIRS are ready. */
function makeAhead(): void {
  making = undefined;
  if (spare.length < SPARE_PAIRS) spare.push(newKeyPair());
  if (spare.length < SPARE_PAIRS) {
    making = setTimeout(makeAhead, NEXT_PAIR_AFTER_MS);
    making.unref();
  }
}

/** A fresh key pair: one made ahead if one is ready (taken, so never handed out again). */
function generateX25519KeyPair(): KeyPair {
  const pair = spare.pop() ?? newKeyPair();
  if (making === undefined) {
    making = setTimeout(makeAhead, REFILL_AFTER_MS);
    making.unref();
  }
  return pair;
}

function newKeyPair(): KeyPair {
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
) => diffieHellman({ privateKey: privateKeyOf(privateKey), publicKey: publicKeyOf(publicKey) });

/** The parts of Noise's crypto interface this file provides. */
export const keyAgreement: Pick<
  ICryptoInterface,
  'generateX25519KeyPair' | 'generateX25519SharedKey'
> = { generateX25519KeyPair, generateX25519SharedKey };
