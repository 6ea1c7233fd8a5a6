/**
 * Raw-digest signatures with presigned nonces (docs/decisions/195-presigned-nonces.md). ECDSA's
 * costly part, R = k·G and k⁻¹, does not depend on the message when k is random: a bounded pool of
 * them is computed while the signer is idle, one k·G per step, so that signing at request time is
 * s = k⁻¹·z + k⁻¹·r·d mod n, a few µs of BigInt arithmetic instead of ~0.15 ms of libsecp256k1.
 *
 * Each nonce is taken out of the pool before it is used and never put back, whatever happens
 * next. With the pool empty, `signDigest` signs as before (RFC 6979). The signature has the form
 * `signDigest` gives and the payments contract accepts: 65 bytes (r, s, v = 27 or 28), low `s`.
 */
import { randomBytes } from 'node:crypto';
import * as secp256k1 from 'tiny-secp256k1';
import type { Hex } from 'viem';
import { HALF_ORDER } from './digestSignatures.js';
import { signDigest } from './digestSigner.js';

/** The order of secp256k1's group. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** Nonces kept per key: enough for a burst, each ~200 bytes. */
const DEFAULT_POOL = 48;
/** Nonces whose k⁻¹ are computed together (`invertAll`). */
const BATCH = 8;
/** A signer is idle when it was asked for no signature for this long (ms). */
const IDLE_MS = 1;

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

/** A uniform scalar in [1, n − 1] from the CSPRNG, by rejection (no bias). */
function randomScalar(): { bytes: Uint8Array; value: bigint } {
  for (;;) {
    const bytes = randomBytes(32);
    const value = toBigInt(bytes);
    if (value > 0n && value < N) return { bytes, value };
  }
}

/** a⁻¹ mod n by the extended Euclidean algorithm (a in [1, n − 1]); variable time, see `invertAll`. */
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

/**
 * The inverses of `values` mod n with one Euclid for all (Montgomery's trick: three products
 * each instead of a ~45 µs inversion each). Euclid's time depends on its input: it inverts the
 * product times a fresh random b, which says nothing of the values, and multiplies by b again.
 */
function invertAll(values: bigint[]): bigint[] {
  const prefix: bigint[] = [];
  let product = 1n;
  for (const value of values) {
    product = (product * value) % N;
    prefix.push(product);
  }
  const blind = randomScalar().value;
  let inverse = (invert((product * blind) % N) * blind) % N;
  const inverses = new Array<bigint>(values.length);
  for (let i = values.length - 1; i > 0; i--) {
    inverses[i] = (inverse * prefix[i - 1]!) % N;
    inverse = (inverse * values[i]!) % N;
  }
  inverses[0] = inverse;
  return inverses;
}

/** A nonce whose k⁻¹ is not computed yet. */
interface Drawn {
  k: bigint;
  x: bigint;
  parity: number;
}

/** A fresh k and R = k·G, or undefined for the ~2⁻¹²⁸ of R.x ≥ n. */
function draw(): Drawn | undefined {
  const k = randomScalar();
  // libsecp256k1's constant-time multiplication by G; uncompressed: x then y.
  const point = secp256k1.pointFromScalar(k.bytes, false);
  if (point === null) return undefined;
  const x = toBigInt(point.subarray(1, 33));
  // r = x mod n, and the recovery id's bit 1 set when x ≥ n: such a k is dropped instead.
  if (x === 0n || x >= N) return undefined;
  return { k: k.value, x, parity: point[64]! & 1 };
}

/** Signs 32-byte digests with one key; see the module's comment. */
export class PresignedSigner {
  private readonly nonces: Nonce[] = [];
  /** Drawn, waiting for their batch's inversion: not yet usable. */
  private readonly drawn: Drawn[] = [];
  private readonly d: bigint;
  private timer: NodeJS.Timeout | undefined;
  /** Signatures asked for, and their number when the next fill step was armed. */
  private signs = 0;
  private signsBefore = 0;
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
    this.signs++;
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

  /** Resolves once the pool is full (tests; a signer fills itself while idle). */
  async filled(): Promise<void> {
    this.fillSoon();
    while (this.nonces.length < this.size) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  private fillSoon(): void {
    if (this.timer !== undefined || this.nonces.length + this.drawn.length >= this.size) return;
    this.signsBefore = this.signs;
    this.timer = setTimeout(() => this.fillStep(), IDLE_MS);
    this.timer.unref();
  }

  /**
   * Fills only while idle: one k·G (~0.15 ms) when no signature was asked for since the last
   * step, IDLE_MS ago. A loaded signer signs directly (what it costs anyway, on the critical path
   * or beside it), with no extra turns of the event loop; a request waits for at most one k·G.
   * Every BATCH drawn nonces, or when they would fill the pool, their inverses, and into the pool.
   */
  private fillStep(): void {
    this.timer = undefined;
    if (this.signs === this.signsBefore) {
      const drawn = draw();
      if (drawn !== undefined) this.drawn.push(drawn);
      const room = this.size - this.nonces.length;
      if (this.drawn.length >= Math.min(BATCH, room)) this.invertDrawn();
    }
    this.fillSoon();
  }

  private invertDrawn(): void {
    const batch = this.drawn.splice(0);
    const inverses = invertAll(batch.map(({ k }) => k));
    batch.forEach(({ x, parity }, i) => {
      const kInv = inverses[i]!;
      this.nonces.push({
        kInv,
        kInvRD: (((kInv * x) % N) * this.d) % N,
        r: x.toString(16).padStart(64, '0'),
        parity,
      });
    });
  }
}
