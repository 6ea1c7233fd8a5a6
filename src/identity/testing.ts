/** Test helpers for signatures (used by the identity, payments and receipt tests). */

/** secp256k1's group order. */
const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * The same signature with `s` mirrored to n - s and the other `v`: viem still recovers the same
 * signer from it; the payments contract (and the receipt check) refuses it (a high `s`).
 */
export function mirroredSignature(signature: `0x${string}`): `0x${string}` {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  const mirroredS = (ORDER - s).toString(16).padStart(64, '0');
  return `0x${signature.slice(2, 66)}${mirroredS}${(v === 27 ? 28 : 27).toString(16)}`;
}
