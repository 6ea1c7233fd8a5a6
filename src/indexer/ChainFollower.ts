/**
 * Follows the payments contract (decision 130): reads only blocks at least `confirmations` deep
 * (a reorg shallower than that never reaches the store), in ranges of at most `batchBlocks`,
 * resuming after the stored cursor, and folds what it stored into per-seller stats in memory.
 */
import type { Address } from 'viem';
import type { PaymentsContract } from '../chain/index.js';
import { errorFirstLine } from '../errors/index.js';
import { readChainEvents } from './chainEvents.js';
import type { IndexerStore } from './IndexerStore.js';
import { foldChainEvents, type IndexedSellerStats } from './sellerStats.js';

export interface ChainFollowerOptions {
  contract: PaymentsContract;
  store: IndexerStore;
  /** Blocks a log must be buried under before it is read. Default 2. */
  confirmations?: number;
  /** Largest block range per `eth_getLogs`. Default 2,000. */
  batchBlocks?: number;
  /** First block to read when there is no cursor yet. Default 0. */
  fromBlock?: bigint;
  now?: () => number;
}

/** What the chain said at the last successful read. */
export interface ChainView {
  stats: ReadonlyMap<Address, IndexedSellerStats>;
  /** Last block folded in, or null before the first read. */
  lastBlock: bigint | null;
  /** Unix seconds of the chain head at the last read (the clock reputation uses). */
  chainTimeSeconds: number | null;
  /** Unix ms of the last successful read, null before one. */
  refreshedAt: number | null;
  /** Why the last read failed (cleared by the next success). */
  error: string | null;
}

/** Incremental, restart-safe reader of the contract's stats events. */
export class ChainFollower {
  private readonly options: ChainFollowerOptions;
  private readonly stats = new Map<Address, IndexedSellerStats>();
  private loaded = false;
  private lastBlock: bigint | null = null;
  private chainTimeSeconds: number | null = null;
  private refreshedAt: number | null = null;
  private error: string | null = null;

  constructor(options: ChainFollowerOptions) {
    this.options = options;
  }

  /** The current view (the last good one when the chain is unreachable). */
  view(): ChainView {
    return {
      stats: this.stats,
      lastBlock: this.lastBlock,
      chainTimeSeconds: this.chainTimeSeconds,
      refreshedAt: this.refreshedAt,
      error: this.error,
    };
  }

  /** Reads every confirmed block after the cursor. Never throws: a failure is kept in `error`. */
  async catchUp(): Promise<ChainView> {
    const { contract, store } = this.options;
    const now = this.options.now ?? Date.now;
    try {
      const stored = (await store.cursor()) ?? null;
      if (!this.loaded || stored !== this.lastBlock) {
        // Stored events are folded once; later reads fold only what they add. A cursor moved by
        // another indexer (which crawled while this one waited) means: fold again from the store.
        this.stats.clear();
        foldChainEvents(this.stats, await store.events());
        this.lastBlock = stored;
        this.loaded = true;
      }
      const head = await contract.clients.publicClient.getBlock({ blockTag: 'latest' });
      const confirmed = head.number - BigInt(this.options.confirmations ?? 2);
      const batch = BigInt(this.options.batchBlocks ?? 2000);
      let from = this.lastBlock === null ? (this.options.fromBlock ?? 0n) : this.lastBlock + 1n;
      while (from <= confirmed) {
        const to = from + batch - 1n < confirmed ? from + batch - 1n : confirmed;
        const events = await readChainEvents(contract, from, to);
        await store.append(events, to);
        foldChainEvents(this.stats, events);
        this.lastBlock = to;
        from = to + 1n;
      }
      this.chainTimeSeconds = Number(head.timestamp);
      this.refreshedAt = now();
      this.error = null;
    } catch (error) {
      this.error = errorFirstLine(error);
    }
    return this.view();
  }
}
