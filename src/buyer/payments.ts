/**
 * The buyer's defaults for its payments port (src/ports/buyerPayments.ts) until payments is wired.
 */
import { SvcError } from '../errors/index.js';
import type { BuyerPayments } from '../ports/index.js';

export type {
  BuyerPayments,
  CompleteInput,
  CompleteOutcome,
  LatePaymentInput,
  PrepareInput,
} from '../ports/index.js';

/** The default until payments is wired: free offers only; paid offers get 402. */
export const NO_PAYMENTS: BuyerPayments = {
  prepare: async (input) => {
    throw new SvcError('insufficient_deposits', {
      message: `Seller ${input.peerId} charges for this model and payments are not set up. Run \`svc buyer deposit\` to add funds, or choose a free seller.`,
      details: { neededUsd: null, peerId: input.peerId },
    });
  },
  complete: async () => undefined,
};

/**
 * Development only (`payments: 'unpaid-dev'`): paid offers are requested with no payment at
 * all. Sellers that check payments refuse them; the local demo network does not.
 */
export const UNPAID_DEV_PAYMENTS: BuyerPayments = {
  prepare: async () => undefined,
  complete: async () => undefined,
};
