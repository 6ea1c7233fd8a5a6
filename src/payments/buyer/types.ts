/** Types of the buyer payments service. */
import type { Address, Hex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import type { PaymentsContract } from '../../chain/index.js';
import type { Logger } from '../../log/index.js';
import type { MicroUsd, TokenPriceMicro, TokenUsage } from '../../money/index.js';
import type { SellerTrailer } from '../../network/index.js';
import type { Clock } from '../clock.js';
import type { VoucherMessage } from '../wire.js';
import type { ClaimCheck, ClaimTolerance } from './checkClaim.js';

/** Where the buyer's wallets come from (an IdentityStore fits). */
export interface IdentitySource {
  /** Throws `identity_removed` for a removed identity, `identity_error` for one that cannot load. */
  load(name: string): { account: LocalAccount };
  list(): { name: string; loadable: boolean }[];
  /** The file whose presence says a named identity exists (watched: removal stops its use). */
  recordFile?(name: string): string | undefined;
}

export interface BuyerPaymentsOptions {
  dataDir: string;
  identities: IdentitySource;
  contract: PaymentsContract;
  logger: Logger;
  clock?: Clock;
  /** Lock of a new channel (more when one request needs more). Default 1 USD. */
  channelLockMicro?: MicroUsd;
  tolerance?: ClaimTolerance;
  /** Deposit sweep period; 0 disables the timer (call `sweepOnce`). Default 15 s. */
  sweepIntervalMs?: number;
  /** Identity paying the gas of deposits for wallets without ETH (decision 080). Default "default". */
  relayerIdentity?: string;
  /** How often channels are re-read from chain (to notice sellers' closes); 0 disables. Default 60 s. */
  reconcileIntervalMs?: number;
  /** Called when a seller's claim is refused, so routing can penalise it. */
  onClaimRefused?: (event: ClaimRefusedEvent) => void;
}

export interface PrepareArgs {
  identity: string;
  peerId: string;
  sellerAddress: Address;
  price: TokenPriceMicro;
  maxCostMicro: MicroUsd;
  /** The buyer's request id; generated when absent (read it back from `payment.requestId`). */
  requestId?: string;
  /** The seller's advertised `capabilities.payments`; refused when it names another chain. */
  sellerPayments?: { chainId: number; paymentsContract: string };
}

export interface CompleteArgs {
  requestId: string;
  peerId: string;
  claimed: SellerTrailer | undefined;
  estimatedUsage: TokenUsage;
  price: TokenPriceMicro;
  /** The service the seller was asked for: its tokenizer family widens the claim tolerance. */
  serviceId?: string;
  /** Unit-billed (images, video; decision 091): counted units must match exactly. */
  units?: boolean;
  /** The seller's receipt was missing or bad (decision 168): never more than the buyer's count. */
  receiptRefused?: boolean;
  /**
   * Called with the amount about to be committed for this request, before the voucher is signed
   * (the buyer journals it: a voucher never exists without its request record).
   */
  onCommit?: (amountMicro: MicroUsd) => void;
}

/** A stream a crashed run of the buyer delivered and never paid (`BuyerPaymentService.payLate`). */
export interface LatePayArgs {
  requestId: string;
  identity: string;
  peerId: string;
  sellerAddress: Address;
  /** What was delivered at the seller's price, within the request's cap. */
  amountMicro: MicroUsd;
  /** The buyer's count of what was delivered. */
  usage: TokenUsage;
  /** Called with the amount about to be committed, before the voucher is signed. */
  onCommit?: (amountMicro: MicroUsd) => void;
}

/** A signed (or, at 0, unsigned) voucher increment for one request. */
export interface SignedIncrement {
  amountMicro: MicroUsd;
  cumulativeMicro: MicroUsd;
  /** Send on `/svc/voucher/1` (also carried by the next request's payment object). */
  voucher?: VoucherMessage;
}

export interface CompleteResult {
  claim: ClaimCheck;
  amountMicro: MicroUsd;
  cumulativeMicro: MicroUsd;
  /** Send on `/svc/voucher/1` (also carried by the next request's payment object). */
  voucher?: VoucherMessage;
}

export interface ClaimRefusedEvent {
  peerId: string;
  requestId: string;
  channelId: Hex;
  reason: string;
  claimedMicro: MicroUsd;
  estimatedMicro: MicroUsd;
}
