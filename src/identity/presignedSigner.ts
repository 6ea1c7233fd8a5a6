/**
 * Raw-digest signatures with presigned nonces (docs/decisions/195-presigned-nonces.md). ECDSA's
 * costly part, R = k·G and k⁻¹, does not depend on the message when k is random: a bounded pool of
 * them is computed in later turns of the event loop, one per turn, so that signing at request time
 * is s = k⁻¹·z + k⁻¹·r·d mod n, a few µs of BigInt arithmetic instead of ~0.1 ms of libsecp256k1.
 *
 * Each nonce is taken out of the pool before it is used and never put back, whatever happens
 * next. With the pool empty, `signDigest` signs as before (RFC 6979). The signature has the form
 * `signDigest` gives and the payments contract accepts: 65 bytes (r, s, v = 27 or 28), low `s`.
 */
import { createHmac, randomBytes } from 'node:crypto';
import * as secp256k1 from 'tiny-secp256k1';
import type { Hex } from 'viem';
import { HALF_ORDER } from './digestSignatures.js';
import { signDigest } from './digestSigner.js';

/** The order of secp256k1's group. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** Nonces kept per key: enough for a burst, each ~200 bytes. */
const DEFAULT_POOL = 48;

/** One nonce's precomputed part, bound to one key: all but the term with the digest. */
interface Nonce {
  /** k⁻¹ mod n. */
  kInv: bigint;
  /** k⁻¹·r·d mod n. */
  kInvRD: bigint;
  /** r as 64 hex digits. */
  r: string;
  /** The parity of R's y: the recovery id before low-s normalisation. */
  parity: number;
}

function toBigInt(bytes: Uint8Array): bigint {
  return BigInt(
    `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`,
  );
}

/**
 * A uniform scalar in [1, n − 1], by rejection. Hedged: the CSPRNG's 32 bytes pass through
 * HMAC-SHA256 keyed by the signing key, so an RNG an attacker could predict still gives nonces
 * it cannot (RFC 6979's concern, kept without its determinism).
 */
function randomScalar(key: Uint8Array): { bytes: Uint8Array; value: bigint } {
  for (;;) {
    const bytes = createHmac('sha256', key).update(randomBytes(32)).digest();
    const value = toBigInt(bytes);
    if (value > 0n && value < N) return { bytes, value };
  }
}

/** a⁻¹ mod n by the extended Euclidean algorithm (a in [1, n − 1]); variable time, see `draw`. */
function invert(a: bigint): bigint {
  let [r0, r1] = [a, N];
  let [s0, s1] = [1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return s0 < 0n ? s0 + N : s0;
}

/** A fresh nonce for `key` (`d` its value), or undefined for the ~2⁻¹²⁸ of R.x ≥ n. */
function draw(key: Uint8Array, d: bigint): Nonce | undefined {
  const k = randomScalar(key);
  // libsecp256k1's constant-time multiplication by G; uncompressed: x then y.
  const point = secp256k1.pointFromScalar(k.bytes, false);
  if (point === null) return undefined;
  const x = toBigInt(point.subarray(1, 33));
  // r = x mod n, and the recovery id's bit 1 set when x ≥ n: such a k is dropped instead.
  if (x === 0n || x >= N) return undefined;
  // The inverse's time depends on its input: it inverts k·b for a fresh random b, which says
  // nothing of k, and multiplies by b again.
  const blind = randomScalar(key).value;
  const kInv = (invert((k.value * blind) % N) * blind) % N;
  return {
    kInv,
    kInvRD: (((kInv * x) % N) * d) % N,
    r: Buffer.from(point.subarray(1, 33)).toString('hex'),
    parity: point[64]! & 1,
  };
}

/** Signs 32-byte digests with one key; see the module's comment. */
export class PresignedSigner {
  private readonly nonces: Nonce[] = [];
  private readonly d: bigint;
  private filling = false;
  /** Signatures made with a pooled nonce, and with libsecp256k1 because the pool was empty. */
  readonly counts = { pooled: 0, direct: 0 };

  constructor(
    private readonly key: Uint8Array,
    private readonly size = DEFAULT_POOL,
  ) {
    this.d = toBigInt(key);
  }

  /** Nonces ready now. */
  get ready(): number {
    return this.nonces.length;
  }

  /** The 65-byte signature (r, s, v = 27 or 28, low `s`) of `digest`. */
  sign(digest: Uint8Array): Hex {
    // Out of the pool first: an exception below still leaves this nonce used.
    const nonce = this.nonces.pop();
    this.fillSoon();
    if (nonce !== undefined) {
      let s = (nonce.kInv * toBigInt(digest) + nonce.kInvRD) % N;
      let parity = nonce.parity;
      if (s > HALF_ORDER) {
        // −s signs with −R, whose y has the other parity.
        s = N - s;
        parity ^= 1;
      }
      if (s !== 0n) {
        this.counts.pooled++;
        return `0x${nonce.r}${s.toString(16).padStart(64, '0')}${parity === 0 ? '1b' : '1c'}`;
      }
    }
    this.counts.direct++;
    return signDigest(digest, this.key);
  }

  /** Resolves once the pool is full (tests; a signer fills itself). */
  async filled(): Promise<void> {
    this.fillSoon();
    while (this.nonces.length < this.size) await new Promise((resolve) => setImmediate(resolve));
  }

  private fillSoon(): void {
    if (this.filling || this.nonces.length >= this.size) return;
    this.filling = true;
    setImmediate(() => this.fillOne()).unref();
  }

  /** One nonce per turn of the event loop: a request waits for at most one k·G. */
  private fillOne(): void {
    this.filling = false;
    const nonce = draw(this.key, this.d);
    if (nonce !== undefined) this.nonces.push(nonce);
    this.fillSoon();
  }
}
