/**
 * Signatures as honest and malicious parties make them: the buyer's own (through the product's
 * signing code), someone else's, for another chain or contract, mirrored, or cut short.
 */
import {
  type Address,
  concatHex,
  type Hex,
  numberToHex,
  padHex,
  parseSignature,
  serializeSignature,
  sliceHex,
} from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { RECEIVE_WITH_AUTHORIZATION_TYPES } from '../../../chain/index.js';
import { type PaymentsDomain, type ReserveMessage, signReserve, signVoucher } from '../../index.js';
import type { SignatureFlaw } from './model.js';
import type { World } from './world.js';

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The same signature with s' = n - s and v flipped: valid for ecrecover, refused by low-s checks. */
function malleate(signature: Hex): Hex {
  const { r, s, yParity } = parseSignature(signature);
  const mirrored = padHex(numberToHex(SECP256K1_N - BigInt(s)), { size: 32 });
  return serializeSignature({ r, s: mirrored, yParity: yParity === 0 ? 1 : 0 });
}

/** The domain a flawed signature was made for. */
function domainFor(world: World, flaw: SignatureFlaw): PaymentsDomain {
  if (flaw === 'crossChain') return { ...world.domain, chainId: world.domain.chainId + 1 };
  if (flaw === 'crossContract') return { ...world.domain, paymentsAddress: world.usdc };
  return world.domain;
}

/** Applies the post-signing flaws (mirror, truncate). */
function finish(signature: Hex, flaw: SignatureFlaw): Hex {
  if (flaw === 'malleated') return malleate(signature);
  if (flaw === 'short') return sliceHex(signature, 0, 64);
  return signature;
}

/** A Reserve signed by `buyer` (or, when forged, by `forger`) with `flaw`. */
export async function reserveSignature(
  world: World,
  buyer: PrivateKeyAccount,
  forger: PrivateKeyAccount,
  reserve: ReserveMessage,
  flaw: SignatureFlaw,
): Promise<Hex> {
  const signer = flaw === 'forged' ? forger : buyer;
  return finish(await signReserve(signer, domainFor(world, flaw), reserve), flaw);
}

/** A Voucher signed by `buyer` (or, when forged, by `forger`) with `flaw`. */
export async function voucherSignature(
  world: World,
  buyer: PrivateKeyAccount,
  forger: PrivateKeyAccount,
  voucher: { channelId: Hex; cumulativeAmount: bigint },
  flaw: SignatureFlaw,
): Promise<Hex> {
  const signer = flaw === 'forged' ? forger : buyer;
  return finish(await signVoucher(signer, domainFor(world, flaw), voucher), flaw);
}

/** An EIP-3009 ReceiveWithAuthorization from `owner` (to `to`, normally the payments contract). */
export async function authorizationSignature(
  world: World,
  owner: PrivateKeyAccount,
  forger: PrivateKeyAccount,
  message: { to: Address; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex },
  flaw: SignatureFlaw,
): Promise<Hex> {
  const signer = flaw === 'forged' ? forger : owner;
  const chainId = flaw === 'crossChain' ? world.domain.chainId + 1 : world.domain.chainId;
  // TestUSDC's EIP-712 domain, as src/contracts/TestUSDC.sol defines it.
  const signature = await signer.signTypedData({
    domain: { name: 'USD Coin', version: '2', chainId, verifyingContract: world.usdc },
    types: RECEIVE_WITH_AUTHORIZATION_TYPES,
    primaryType: 'ReceiveWithAuthorization',
    message: { from: owner.address, ...message },
  });
  return finish(signature, flaw);
}

/** A fresh 32-byte nonce from a counter (reproducible under a seed). */
export function counterNonce(counter: number): Hex {
  return padHex(numberToHex(counter + 1), { size: 32 });
}

/** Split v, r, s of a 65-byte signature, as depositWithAuthorization takes them. */
export function splitSignature(signature: Hex): { v: number; r: Hex; s: Hex } {
  return {
    r: sliceHex(signature, 0, 32),
    s: sliceHex(signature, 32, 64),
    v: Number.parseInt(sliceHex(signature, 64, 65).slice(2), 16),
  };
}

/** Concatenates a salt label into 32 bytes. */
export function saltOf(counter: number): Hex {
  return concatHex(['0x5a17', padHex(numberToHex(counter), { size: 30 })]);
}
