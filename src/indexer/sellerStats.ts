/**
 * A seller's on-chain record folded from the contract's events (never from what the seller
 * says about itself). Field for field it equals the contract's own `sellerStats` counters, plus
 * how many channels were closed, so the buyer's `trustScore` gives the same score here.
 */
import type { Address } from 'viem';
import type { OnChainSellerStats } from '../chain/index.js';
import type { ChainEvent } from './chainEvents.js';

/** The contract's counters plus closed channels and the set of paying buyers. */
export interface IndexedSellerStats extends OnChainSellerStats {
  channelsClosed: number;
  /** Buyers that paid at least once (its size is `uniqueBuyers`). */
  payingBuyers: Set<Address>;
}

/** An empty record. */
export function emptySellerStats(): IndexedSellerStats {
  return {
    settledVolumeMicro: 0n,
    channelCount: 0,
    uniqueBuyers: 0,
    reclaimedUnsettled: 0,
    firstSettlementAt: 0,
    lastSettlementAt: 0,
    channelsClosed: 0,
    payingBuyers: new Set(),
  };
}

/** Applies `events` (in chain order) to `stats`, a map seller -> record, in place. */
export function foldChainEvents(
  stats: Map<Address, IndexedSellerStats>,
  events: Iterable<ChainEvent>,
): void {
  for (const event of events) {
    let entry = stats.get(event.seller);
    if (!entry) {
      entry = emptySellerStats();
      stats.set(event.seller, entry);
    }
    if (event.kind === 'opened') entry.channelCount += 1;
    else if (event.kind === 'settled') {
      entry.settledVolumeMicro += event.amountMicro;
      if (entry.firstSettlementAt === 0) entry.firstSettlementAt = event.blockTime;
      entry.lastSettlementAt = event.blockTime;
      if (!entry.payingBuyers.has(event.buyer)) {
        entry.payingBuyers.add(event.buyer);
        entry.uniqueBuyers += 1;
      }
    } else {
      entry.channelsClosed += 1;
      if (event.reclaimed && event.amountMicro === 0n) entry.reclaimedUnsettled += 1;
    }
  }
}
