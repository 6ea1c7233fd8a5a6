/**
 * The payments seam (SEAMS.md "Buyer <-> payments"). The buyer calls `prepare` before and
 * `complete` after each paid seller request; free offers skip both.
 */
import { SvcError } from '../errors/index.js';
import type { PeerId } from '../identity/index.js';
import type { MicroUsd, TokenPricing, TokenUsage } from '../money/index.js';
import type { SellerTrailer } from '../network/index.js';

export interface PrepareInput {
  identity: string;
  peerId: PeerId;
  sellerAddress: `0x${string}`;
  price: TokenPricing;
  maxCostMicro: MicroUsd;
}

export interface CompleteInput {
  requestId: string;
  peerId: PeerId;
  claimed: SellerTrailer | undefined;
  estimatedUsage: TokenUsage;
  price: TokenPricing;
}

/** Implemented by the payments capability. */
export interface BuyerPayments {
  /** The opaque payment object for SellerRequest.payment; throws `insufficient_deposits`. */
  prepare(input: PrepareInput): Promise<Record<string, unknown>>;
  /** Checks the seller's claim and signs the cumulative voucher. */
  complete(input: CompleteInput): Promise<void>;
}

/** The default until payments is wired: free offers only; paid offers get 402. */
export const NO_PAYMENTS: BuyerPayments = {
  prepare: async (input) => {
    throw new SvcError('insufficient_deposits', {
      message: `Seller ${input.peerId} charges for this model and payments are not set up. Run \`svc buyer deposit\` to add funds, or choose a free seller.`,
      details: { neededUsd: null, peerId: input.peerId },
    });
  },
  complete: async () => {},
};

/**
 * Development only (`payments: 'unpaid-dev'`): paid offers are requested with no payment at
 * all. Sellers that check payments refuse them; the local demo network does not.
 */
export const UNPAID_DEV_PAYMENTS: BuyerPayments = {
  prepare: async () => ({}),
  complete: async () => {},
};
