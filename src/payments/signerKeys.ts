/**
 * Checking a known buyer's signatures fast (decision 161). The seller checks a voucher on every
 * paid request; recovering the signer with viem costs ~2 ms of CPU on this machine (ECDSA public
 * key recovery in JavaScript), more than everything else on the request path. A buyer signs many
 * vouchers with one key, so:
 *
 * - the first signature of an address is checked by recovery (as before), and the recovered key
 *   is kept when it is that address's key;
 * - later ones are checked against the kept key, R = u1·G + u2·P, with P's multiples
 *   precomputed once it has signed twice: ~0.5 ms instead of ~2 ms.
 *
 * Both paths accept exactly what the payments contract's `_recover` accepts: the contract's form
 * (`hasContractForm`) and `ecrecover(digest, v, r, s)` = the address. ecrecover rebuilds R from
 * x = r and the parity in v and returns r⁻¹(s·R − h·G); that is P exactly when R = u1·G + u2·P
 * (u1 = h/s, u2 = r/s), so the check is R's x equal to r and R's parity equal to v's.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { type Address, type Hex, recoverPublicKey } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';

const { Point } = secp256k1;
type CurvePoint = InstanceType<typeof Point>;
const Fn = Point.Fn;

/** Half the group order: the contract refuses a signature whose `s` is larger. */
export const HALF_ORDER = Fn.ORDER >> 1n;
/** Window of the precomputed multiples (~25 ms and a few hundred KB per key, once). */
const WINDOW = 6;
/** Keys kept, least recently used dropped first. */
const MAX_KEYS = 64;

interface KnownKey {
  point: CurvePoint;
  checks: number;
}

/** The signing keys seen, by lowercase address, in order of use (a Map keeps insertion order). */
const known = new Map<string, KnownKey>();

/**
 * True when the payments contract's `_recover` accepts the signature's form: 65 bytes, `v` of
 * 0, 1, 27 or 28, a low `s`. viem recovers the signer from a high-`s` signature too (the same point,
 * mirrored), so a voucher in that form would be kept and then refused on chain at the close.
 */
export function hasContractForm(signature: Hex): boolean {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return false;
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  return s > 0n && s <= HALF_ORDER && (v === 0 || v === 1 || v === 27 || v === 28);
}

/** True when `signature` of `digest` is `expected`'s, in a form the contract accepts. */
export async function isSignedBy(digest: Hex, signature: Hex, expected: Address): Promise<boolean> {
  if (!hasContractForm(signature)) return false;
  const address = expected.toLowerCase();
  const key = known.get(address);
  if (key === undefined) return recoverAndKeep(digest, signature, address);
  known.delete(address);
  known.set(address, key);
  if (++key.checks === 2) key.point.precompute(WINDOW, false);
  return signedWithKey(key.point, digest, signature);
}

async function recoverAndKeep(digest: Hex, signature: Hex, address: string): Promise<boolean> {
  let publicKey: Hex;
  try {
    publicKey = await recoverPublicKey({ hash: digest, signature });
  } catch {
    return false;
  }
  if (publicKeyToAddress(publicKey).toLowerCase() !== address) return false;
  known.set(address, { point: Point.fromHex(publicKey.slice(2)), checks: 1 });
  if (known.size > MAX_KEYS) known.delete(known.keys().next().value as string);
  return true;
}

/** ecrecover(digest, v, r, s) = P, for a signature already in the contract's form. */
export function signedWithKey(point: CurvePoint, digest: Hex, signature: Hex): boolean {
  const r = BigInt(`0x${signature.slice(2, 66)}`);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  if (r === 0n || r >= Fn.ORDER) return false;
  const inverse = Fn.inv(s);
  const u1 = Fn.create(Fn.create(BigInt(digest)) * inverse);
  const u2 = Fn.create(r * inverse);
  const R = Point.BASE.multiplyUnsafe(u1).add(point.multiplyUnsafe(u2));
  if (R.is0()) return false;
  const { x, y } = R.toAffine();
  return x === r && Number(y & 1n) === (v >= 27 ? v - 27 : v);
}

/** Forgets every kept key (tests). */
export function forgetSignerKeys(): void {
  known.clear();
}
