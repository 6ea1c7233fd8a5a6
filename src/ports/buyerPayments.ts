/**
 * The buyer's payments port: the buyer calls `prepare` before and `complete` after each paid
 * seller request; free offers skip both. src/payments implements it; it sits below both so the
 * payments never import the buyer (docs/decisions/182-folder-floors-checked.md).
 */
import type { PeerId } from '../identity/index.js';
import type { MicroUsd, TokenPriceMicro, TokenUsage } from '../money/index.js';
import type { SellerTrailer } from '../network/index.js';

export interface PrepareInput {
  identity: string;
  peerId: PeerId;
  sellerAddress: `0x${string}`;
  price: TokenPriceMicro;
  maxCostMicro: MicroUsd;
  /** The buyer's request id; `complete` is called with the same one. */
  requestId: string;
  /** The seller's advertised `capabilities.payments`, when it has one. */
  sellerPayments?: { chainId: number; paymentsContract: string };
}

export interface CompleteInput {
  requestId: string;
  peerId: PeerId;
  claimed: SellerTrailer | undefined;
  estimatedUsage: TokenUsage;
  price: TokenPriceMicro;
  /** The service id the seller was asked for (the claim tolerance depends on its tokenizer). */
  serviceId?: string;
  /** Unit-billed (images, video): the seller's unit count must match the buyer's exactly. */
  units?: boolean;
  /**
   * The seller's receipt was missing or bad (src/buyer/receiptCheck.ts): pay no more than the
   * buyer's own count, and record the claim as refused.
   */
  receiptRefused?: boolean;
  /** Called with the amount committed for this request before its voucher is signed. */
  onCommit?: (amountMicro: MicroUsd) => void;
}

/** What `complete` committed to the seller for the request (its voucher increment). */
export interface CompleteOutcome {
  amountMicro: MicroUsd;
}

/** A stream a crashed run of this buyer delivered and never paid (src/buyer/closeOpenRecords.ts). */
export interface LatePaymentInput {
  requestId: string;
  identity: string;
  peerId: PeerId;
  sellerAddress: `0x${string}`;
  /** What was delivered, at the seller's price, within the request's cap. */
  amountMicro: MicroUsd;
  /** The buyer's count of what was delivered (the channel's metering). */
  usage: TokenUsage;
  /** Called with the amount about to be committed, before the voucher is signed. */
  onCommit: (amountMicro: MicroUsd) => void;
}

/** Implemented by the payments capability. */
export interface BuyerPayments {
  /**
   * The opaque payment object for SellerRequest.payment (undefined: send none); throws
   * `insufficient_deposits`. src/payments' `BuyerPaymentService` satisfies this interface.
   */
  prepare(input: PrepareInput): Promise<object | undefined>;
  /**
   * Checks the seller's claim and signs the cumulative voucher; returns what it committed
   * (undefined: nothing is paid, e.g. development without payments).
   */
  complete(input: CompleteInput): Promise<CompleteOutcome | undefined>;
  /**
   * Signs a cumulative voucher on the identity's channel with the seller for a stream delivered
   * before a crash, and sends it (docs/decisions/154-late-voucher-after-a-crash.md); returns what it
   * committed (undefined: nothing, e.g. no open channel with that seller).
   */
  payLate?(input: LatePaymentInput): Promise<CompleteOutcome | undefined>;
  /**
   * The seller is back (a new connection, a fresh record): vouchers whose delivery to it failed
   * go now, not at their next back-off.
   */
  sellerBack?(peerId: PeerId): void;
  /** Frees a prepared payment whose attempt delivered nothing (the seller's error, if any). */
  release?(
    requestId: string,
    sellerError?: { code?: string; details?: Record<string, unknown> },
  ): void;
}
