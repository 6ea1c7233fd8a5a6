/**
 * secp256k1 signatures through Node's OpenSSL instead of pure JavaScript. Every new connection
 * signs and verifies several times (the Noise handshake proves each side's identity key, identify
 * carries a signed peer record); in `@libp2p/crypto` each is a `@noble/curves` operation of
 * several milliseconds, most of a new connection's local set-up
 * (docs/decisions/179-a-cheaper-new-connection.md). The key classes' `sign` and `verify` are
 * replaced once per process with native ones that give the same answers: DER signatures over
 * the SHA-256 of the message, low-S only (what noble produces and insists on).
 */
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';

/** The curve order and its half (a signature with s above the half is the high-S twin). */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N >> 1n;
/** DER prefixes of an SPKI with a compressed / uncompressed secp256k1 point after them. */
const SPKI_COMPRESSED = Buffer.from('3036301006072a8648ce3d020106052b8104000a032200', 'hex');
const SPKI_UNCOMPRESSED = Buffer.from('3056301006072a8648ce3d020106052b8104000a034200', 'hex');
/** DER of a SEC1 private key: the 32 secret bytes go between the two halves. */
const SEC1_HEAD = Buffer.from('302e0201010420', 'hex');
const SEC1_TAIL = Buffer.from('a00706052b8104000a', 'hex');

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

const publicKeys = new WeakMap<object, KeyObject>();
const privateKeys = new WeakMap<object, KeyObject>();

function bytesOf(message: Message): Uint8Array {
  return message instanceof Uint8Array ? message : Buffer.concat([...message]);
}

function publicKeyObject(key: PublicLike): KeyObject {
  let object = publicKeys.get(key);
  if (object === undefined) {
    const prefix = key._key.length === 33 ? SPKI_COMPRESSED : SPKI_UNCOMPRESSED;
    object = createPublicKey({
      key: Buffer.concat([prefix, key._key]),
      format: 'der',
      type: 'spki',
    });
    publicKeys.set(key, object);
  }
  return object;
}

function privateKeyObject(key: PrivateLike): KeyObject {
  let object = privateKeys.get(key);
  if (object === undefined) {
    object = createPrivateKey({
      key: Buffer.concat([SEC1_HEAD, key.raw, SEC1_TAIL]),
      format: 'der',
      type: 'sec1',
    });
    privateKeys.set(key, object);
  }
  return object;
}

/** Reads a DER ECDSA signature's r and s; undefined when it is not exactly one. */
function parseDer(sig: Uint8Array): { r: bigint; s: bigint } | undefined {
  if (sig.length < 8 || sig[0] !== 0x30 || sig[1] !== sig.length - 2) return undefined;
  const integer = (at: number): { value: bigint; next: number } | undefined => {
    if (sig[at] !== 0x02) return undefined;
    const length = sig[at + 1] ?? 0;
    if (length === 0 || length > 33 || at + 2 + length > sig.length) return undefined;
    const bytes = sig.subarray(at + 2, at + 2 + length);
    return { value: BigInt(`0x${Buffer.from(bytes).toString('hex')}`), next: at + 2 + length };
  };
  const r = integer(2);
  const s = r && integer(r.next);
  if (!r || !s || s.next !== sig.length) return undefined;
  return { r: r.value, s: s.value };
}

function derInteger(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  // A leading byte with the top bit set would read as negative: pad it with a zero.
  if (Number.parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`;
  const bytes = Buffer.from(hex, 'hex');
  return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
}

/** The low-S form of a DER signature (OpenSSL gives either; noble verifies only low-S). */
function lowS(sig: Uint8Array): Uint8Array {
  const parsed = parseDer(sig);
  if (parsed === undefined || parsed.s <= HALF_N) return sig;
  const body = Buffer.concat([derInteger(parsed.r), derInteger(N - parsed.s)]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

function nativeSign(this: PrivateLike, message: Message, options?: Signal): Uint8Array {
  options?.signal?.throwIfAborted();
  return lowS(sign('sha256', bytesOf(message), privateKeyObject(this)));
}

function nativeVerify(this: PublicLike, data: Message, sig: Uint8Array, options?: Signal): boolean {
  options?.signal?.throwIfAborted();
  const parsed = parseDer(sig);
  // noble refuses a high-S signature and one that is not strict DER: so does this.
  if (parsed === undefined || parsed.s > HALF_N || parsed.r === 0n || parsed.s === 0n) return false;
  return verify('sha256', bytesOf(data), publicKeyObject(this), sig);
}

let installed = false;

/** Replaces the secp256k1 key classes' `sign` and `verify` with native ones (once per process). */
export function useNativeSecp256k1(): void {
  if (installed) return;
  installed = true;
  // Any valid key gives the classes: the secret 1 is the smallest.
  const again = privateKeyFromRaw(new Uint8Array(32).fill(0).fill(1, 31));
  const privatePrototype = Object.getPrototypeOf(again) as PrivateLike;
  const publicPrototype = Object.getPrototypeOf(again.publicKey) as PublicLike;
  privatePrototype.sign = nativeSign;
  publicPrototype.verify = nativeVerify;
}
