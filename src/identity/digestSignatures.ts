/**
 * Checking a raw-digest signature as the payments contract's `_recover` does (decision 161), in
 * libsecp256k1 compiled to WebAssembly (`tiny-secp256k1`): ~0.3 ms per check here, where viem's
 * JavaScript recovery took ~2 ms. The seller checks a voucher on every paid request, so this was
 * more than everything else on its request path. The buyer checks every seller's receipt the same
 * way (docs/decisions/168-receipts-anyone-can-check.md).
 *
 * Accepted: the contract's form (`hasContractForm`) and `ecrecover(digest, v, r, s)` equal to the
 * expected address. ecrecover is libsecp256k1's recovery with recovery id v - 27, which is what
 * runs here; r and s out of range are refused by both.
 */
import * as secp256k1 from 'tiny-secp256k1';
import { type Address, type Hex, hexToBytes } from 'viem';
import { keccak } from './keccak.js';

/** Half the group order: the contract refuses a signature whose `s` is larger. */
export const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

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
export function isSignedBy(digest: Hex, signature: Hex, expected: Address): boolean {
  if (!hasContractForm(signature)) return false;
  const v = Number.parseInt(signature.slice(130), 16);
  let publicKey: Uint8Array | null;
  try {
    publicKey = secp256k1.recover(
      hexToBytes(digest),
      hexToBytes(signature.slice(0, 130) as Hex),
      (v >= 27 ? v - 27 : v) as 0 | 1,
      false,
    );
  } catch {
    return false;
  }
  if (!publicKey) return false;
  const address = Buffer.from(keccak(publicKey.subarray(1)).subarray(12)).toString('hex');
  return address === expected.slice(2).toLowerCase();
}
