/**
 * The identity key as a libp2p key. The same secp256k1 key signs EVM payments and authenticates
 * libp2p connections, so the Noise handshake proves the remote holds the key of its peer id.
 * A libp2p secp256k1 PeerId embeds the compressed public key; we decompress it and hash it the
 * Ethereum way to get the EVM address (our peer id). The reverse is impossible (an address is a
 * hash), so `libp2pPeerIdOf` asks a lookup that learnt the pairing from a connection.
 */
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import type { PeerId as Libp2pPeerId, PrivateKey } from '@libp2p/interface';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { type Hex, hexToBytes, toHex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { type PeerId, peerIdFromAddress } from '../identity/index.js';

const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
    e >>= 1n;
  }
  return result;
}

/** Uncompressed (65-byte, 0x04-prefixed) form of a compressed secp256k1 public key. */
export function decompressPublicKey(compressed: Uint8Array): Uint8Array {
  if (compressed.length === 65 && compressed[0] === 4) return compressed;
  if (compressed.length !== 33 || (compressed[0] !== 2 && compressed[0] !== 3)) {
    throw new TypeError('not a compressed secp256k1 public key');
  }
  const x = BigInt(toHex(compressed.subarray(1)));
  if (x >= P) throw new TypeError('not a secp256k1 point');
  const ySquared = (modPow(x, 3n, P) + 7n) % P;
  let y = modPow(ySquared, (P + 1n) / 4n, P);
  if ((y * y) % P !== ySquared) throw new TypeError('not a secp256k1 point');
  if ((y & 1n) !== BigInt(compressed[0]! & 1)) y = P - y;
  const out = new Uint8Array(65);
  out[0] = 4;
  out.set(hexToBytes(`0x${x.toString(16).padStart(64, '0')}`), 1);
  out.set(hexToBytes(`0x${y.toString(16).padStart(64, '0')}`), 33);
  return out;
}

/** The libp2p private key of an identity key (hex). */
export function libp2pKeyFromIdentity(privateKey: Hex): PrivateKey {
  return privateKeyFromRaw(hexToBytes(privateKey));
}

/**
 * `key` as the Noise handshake shows it: the same key, whose public half is sent in its 65-byte
 * uncompressed form. The remote parses the key in the handshake payload twice (to check the
 * payload signature, then to learn our PeerId), and `@libp2p/crypto` validates and compresses a
 * key as it parses it: from the compressed form each parse is two square roots in JavaScript
 * (~0.4 ms), from the uncompressed form a check that the point is on the curve. Both forms are
 * the "standard Bitcoin EC encoding" the peer-id spec names, which every libp2p implementation
 * parses; the remote derives the PeerId from the compressed form it keeps, so our PeerId is
 * unchanged (docs/decisions/194-a-new-connection-without-repeated-work.md). Only the public key's
 * `raw` differs: signing and every other property are the key's own.
 */
export function showUncompressed(key: PrivateKey): PrivateKey {
  if (key.type !== 'secp256k1') return key;
  const publicKey = Object.create(key.publicKey, {
    raw: { value: decompressPublicKey(key.publicKey.raw), enumerable: true },
  }) as PrivateKey['publicKey'];
  return Object.create(key, { publicKey: { value: publicKey, enumerable: true } }) as PrivateKey;
}

/** The libp2p PeerId an identity key gives. */
export function libp2pPeerIdFromIdentity(privateKey: Hex): Libp2pPeerId {
  return peerIdFromPrivateKey(libp2pKeyFromIdentity(privateKey));
}

/** Decompressing a key is a modular exponentiation: remember recent answers (one per stream). */
const peerIdCache = new Map<string, PeerId | undefined>();
const PEER_ID_CACHE_SIZE = 4096;

/**
 * Our peer id (EVM address) of a libp2p PeerId, or undefined when it is not a secp256k1 key
 * (such a peer cannot be a svc peer).
 */
export function peerIdFromLibp2p(peer: Libp2pPeerId): PeerId | undefined {
  if (peer.type !== 'secp256k1' || peer.publicKey === undefined) return undefined;
  // A secp256k1 PeerId's string embeds the whole public key, so it is a safe cache key.
  const key = peer.toString();
  if (peerIdCache.has(key)) return peerIdCache.get(key);
  let peerId: PeerId | undefined;
  try {
    const uncompressed = decompressPublicKey(peer.publicKey.raw);
    peerId = peerIdFromAddress(publicKeyToAddress(toHex(uncompressed)));
  } catch {
    peerId = undefined;
  }
  if (peerIdCache.size >= PEER_ID_CACHE_SIZE) peerIdCache.clear();
  peerIdCache.set(key, peerId);
  return peerId;
}
