/**
 * What the suite believes the chain holds: balances, credits, channels, authorizations, and
 * what each buyer signed. Operations predict their outcome from it (the exact revert reason, in
 * the contract's order of checks) and apply their effects to it when the chain agrees.
 */
import type { Hex } from 'viem';
import { BUYER_START_MICRO, type World } from './world.js';

export const STATUS_NONE = 0;
export const STATUS_OPEN = 1;
export const STATUS_CLOSED = 2;

/** A reserve the buyer signed for a channel under the right domain (replayable later). */
export interface SignedReserve {
  maxAmount: bigint;
  deadline: bigint;
  signature: Hex;
}

export interface ModelChannel {
  id: Hex;
  salt: Hex;
  buyer: number;
  seller: number;
  locked: bigint;
  settled: bigint;
  closeRequestedAt: number;
  status: number;
  /** Highest cumulative voucher the buyer signed for this channel under the right domain. */
  maxSigned: bigint;
  /** Every voucher the buyer signed under the right domain, ascending. */
  vouchers: Array<{ amount: bigint; signature: Hex }>;
  reserves: SignedReserve[];
}

/** A deposit authorization the signer gave (used or not), for replays. */
export interface ModelAuthorization {
  signer: number;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  signature: Hex;
  used: boolean;
}

export interface Model {
  /** Time of the last mined block; the next transaction is mined at `now + 1` or later. */
  now: number;
  /** Seconds the next transaction jumps ahead (a time-jump operation sets it). */
  pendingJump: number;
  wallets: bigint[];
  credits: bigint[];
  held: bigint;
  /** USDC sent straight to the contract (a transfer, not a deposit): held but owed to nobody. */
  donated: bigint;
  channels: ModelChannel[];
  authorizations: ModelAuthorization[];
  /** Salt counter: every channel the suite proposes is new. */
  salts: number;
}

/** The funded start of every sequence. */
export function initialModel(world: World): Model {
  return {
    now: world.startTime,
    pendingJump: 0,
    wallets: world.actors.map((actor) => (actor.role === 'buyer' ? BUYER_START_MICRO : 0n)),
    credits: world.actors.map(() => 0n),
    held: 0n,
    donated: 0n,
    channels: [],
    authorizations: [],
    salts: 0,
  };
}

/** How a signature given to the contract is wrong, if it is. */
export type SignatureFlaw =
  | 'none'
  /** Signed by someone else. */
  | 'forged'
  /** Signed for another chain id. */
  | 'crossChain'
  /** Signed for another contract on this chain. */
  | 'crossContract'
  /** The valid signature with s mirrored (the other half of the curve). */
  | 'malleated'
  /** 64 bytes. */
  | 'short';

/** The payments contract's revert for a flawed signature, or undefined when it recovers the buyer. */
export function paymentsSignatureRevert(
  flaw: SignatureFlaw,
  kind: 'reserve' | 'voucher',
): string | undefined {
  switch (flaw) {
    case 'none':
      return undefined;
    case 'short':
      return 'bad signature length';
    case 'malleated':
      return 'bad signature s';
    default:
      return `invalid ${kind} signature`;
  }
}

/** The token's revert for a flawed EIP-3009 signature (FiatTokenV2's wording). */
export function tokenSignatureRevert(flaw: SignatureFlaw): string | undefined {
  if (flaw === 'none') return undefined;
  if (flaw === 'malleated') return "ECRecover: invalid signature 's' value";
  return 'FiatTokenV2: invalid signature';
}

/** Closes a channel in the model: the unspent lock goes back to the buyer's credits. */
export function finishChannel(model: Model, channel: ModelChannel): void {
  model.credits[channel.buyer] = model.credits[channel.buyer]! + (channel.locked - channel.settled);
  channel.status = STATUS_CLOSED;
}

/** Pays a channel's seller up to `cumulative`. */
export function settleChannel(model: Model, channel: ModelChannel, cumulative: bigint): void {
  const paid = cumulative - channel.settled;
  channel.settled = cumulative;
  model.wallets[channel.seller] = model.wallets[channel.seller]! + paid;
  model.held -= paid;
}

/**
 * The revert a settle of `cumulative` with a signature flawed by `flaw` meets, in the
 * contract's order (status, already settled, above lock, signature), or undefined.
 */
export function settleRevert(
  channel: ModelChannel | undefined,
  cumulative: bigint,
  flaw: SignatureFlaw,
): string | undefined {
  if (!channel || channel.status !== STATUS_OPEN) return 'channel not open';
  if (cumulative <= channel.settled) return 'voucher already settled';
  if (cumulative > channel.locked) return 'voucher above lock';
  return paymentsSignatureRevert(flaw, 'voucher');
}
