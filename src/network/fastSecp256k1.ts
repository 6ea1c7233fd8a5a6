/**
 * secp256k1 signatures of the identity key in libsecp256k1 compiled to WebAssembly
 * (`tiny-secp256k1`), remembered. Every new connection signs and verifies: the Noise handshake
 * proves each side's identity key by a signature over its static Noise key, and identify carries a
 * signed peer record. In `@libp2p/crypto` each is a `@noble/curves` operation of several
 * milliseconds; Node's OpenSSL (decision 179) was 2–3 times slower than libsecp256k1 and had to
 * import the key for every check (docs/decisions/194-a-new-connection-without-repeated-work.md).
 * The key classes' `sign` and `verify` are replaced once per process with ones that give the same
 * answers: DER signatures over the SHA-256 of the message, low-S and strict DER only (what noble
 * produces and insists on), and the same signature bytes (both sign by RFC 6979).
 *
 * Two bounded memories, both exact:
 * - a node's Noise static key lives as long as the node, so it signs the very same message on
 *   every connection: the signature (deterministic) is kept per key and message digest;
 * - a peer that connects again proves its key with the same signature over the same static key:
 *   a (key, digest, signature) found valid is remembered as valid. Only those exact bytes hit;
 *   anything else is checked in full, and a failed check is never remembered.
 */
import { createHash } from 'node:crypto';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import * as secp256k1 from 'tiny-secp256k1';

/** Half the curve order: a signature with s above it is the high-S twin, refused. */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
/** Signatures kept per private key (a node signs its static key, and now and then a record). */
const SIGNATURES_PER_KEY = 16;
/** Valid (key, digest, signature) triples kept: a few hundred bytes each. */
const VERIFIED = 1024;

type Message = Uint8Array | Iterable<Uint8Array>;
interface Signal {
  signal?: AbortSignal;
}
interface PublicLike {
  _key: Uint8Array;
  verify(data: Message, sig: Uint8Array, options?: Signal): boolean;
}
interface PrivateLike {
  raw: Uint8Array;
  sign(message: Message, options?: Signal): Uint8Array;
}

/** A map that keeps its `max` most recently used entries. */
export class Recent<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }
}

const signatures = new WeakMap<object, Recent<Uint8Array>>();
const verified = new Recent<true>(VERIFIED);

function digestOf(message: Message): Buffer {
  const hash = createHash('sha256');
  if (message instanceof Uint8Array) hash.update(message);
  else for (const part of message) hash.update(part);
  return hash.digest();
}

const hex = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');

/** One DER INTEGER of a 32-byte big-endian value: minimal, with a 0 before a top bit set. */
function derInteger(value: Uint8Array): Uint8Array {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start++;
  const pad = (value[start] ?? 0) >= 0x80 ? 1 : 0;
  const out = new Uint8Array(2 + pad + value.length - start);
  out[0] = 0x02;
  out[1] = pad + value.length - start;
  out.set(value.subarray(start), 2 + pad);
  return out;
}

/** The DER form of a 64-byte compact signature (r, s). */
function toDer(compact: Uint8Array): Uint8Array {
  const r = derInteger(compact.subarray(0, 32));
  const s = derInteger(compact.subarray(32, 64));
  const out = new Uint8Array(2 + r.length + s.length);
  out[0] = 0x30;
  out[1] = r.length + s.length;
  out.set(r, 2);
  out.set(s, 2 + r.length);
  return out;
}

/** The 32 bytes of a strict DER INTEGER at `at`, and where the next one starts. */
function readInteger(sig: Uint8Array, at: number): { value: Uint8Array; next: number } | undefined {
  if (sig[at] !== 0x02) return undefined;
  const length = sig[at + 1] ?? 0;
  const body = sig.subarray(at + 2, at + 2 + length);
  if (length === 0 || body.length !== length) return undefined;
  // Negative, or a leading zero that is not needed: not the one encoding noble accepts.
  if ((body[0] ?? 0) >= 0x80) return undefined;
  if (body[0] === 0 && length > 1 && (body[1] ?? 0) < 0x80) return undefined;
  const digits = body[0] === 0 && length > 1 ? body.subarray(1) : body;
  if (digits.length > 32) return undefined;
  const value = new Uint8Array(32);
  value.set(digits, 32 - digits.length);
  return { value, next: at + 2 + length };
}

/** The compact (r, s) of a strict DER signature with 0 < r, s and s ≤ n/2; else undefined. */
function fromDer(sig: Uint8Array): Uint8Array | undefined {
  if (sig.length < 8 || sig[0] !== 0x30 || sig[1] !== sig.length - 2) return undefined;
  const r = readInteger(sig, 2);
  const s = r && readInteger(sig, r.next);
  if (r === undefined || s === undefined || s.next !== sig.length) return undefined;
  const sValue = BigInt(`0x${hex(s.value)}`);
  if (sValue === 0n || sValue > HALF_N || r.value.every((byte) => byte === 0)) return undefined;
  const compact = new Uint8Array(64);
  compact.set(r.value, 0);
  compact.set(s.value, 32);
  return compact;
}

function fastSign(this: PrivateLike, message: Message, options?: Signal): Uint8Array {
  options?.signal?.throwIfAborted();
  const digest = digestOf(message);
  let kept = signatures.get(this);
  if (kept === undefined) {
    kept = new Recent(SIGNATURES_PER_KEY);
    signatures.set(this, kept);
  }
  const key = hex(digest);
  const known = kept.get(key);
  if (known !== undefined) return known.slice();
  const sig = toDer(secp256k1.sign(digest, this.raw));
  kept.set(key, sig);
  return sig.slice();
}

function fastVerify(this: PublicLike, data: Message, sig: Uint8Array, options?: Signal): boolean {
  options?.signal?.throwIfAborted();
  // Malformed first: only a well-formed signature (at most 72 bytes) makes a memory key.
  const compact = fromDer(sig);
  if (compact === undefined) return false;
  const digest = digestOf(data);
  const key = `${hex(this._key)}.${hex(digest)}.${hex(sig)}`;
  if (verified.get(key)) return true;
  let valid: boolean;
  try {
    valid = secp256k1.verify(digest, this._key, compact, true);
  } catch {
    // A point or signature out of range: what noble refuses too.
    valid = false;
  }
  if (valid) verified.set(key, true);
  return valid;
}

let installed = false;

/** Replaces the secp256k1 key classes' `sign` and `verify` (once per process). */
export function useFastSecp256k1(): void {
  if (installed) return;
  installed = true;
  // Any valid key gives the classes: the secret 1 is the smallest.
  const one = privateKeyFromRaw(new Uint8Array(32).fill(0).fill(1, 31));
  const privatePrototype = Object.getPrototypeOf(one) as PrivateLike;
  const publicPrototype = Object.getPrototypeOf(one.publicKey) as PublicLike;
  privatePrototype.sign = fastSign;
  publicPrototype.verify = fastVerify;
}
