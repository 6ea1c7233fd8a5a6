/** Opens the indexer's store and lease from its settings and starts it. */
import type { PaymentsContract } from '../chain/index.js';
import type { NetworkConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { postgresCrawlLease, soleCrawler } from './crawlLease.js';
import { Indexer, type IndexerOptions } from './Indexer.js';
import { openIndexerStore } from './IndexerStore.js';

export interface StartIndexerOptions
  extends Omit<IndexerOptions, 'store' | 'lease' | 'network' | 'contract'> {
  network: NetworkConfig;
  contract: PaymentsContract;
  dataDir: string;
  /** PostgreSQL URL shared by several indexers; absent = SQLite in the data dir. */
  databaseUrl?: string;
  logger?: Logger;
}

export interface RunningIndexer {
  indexer: Indexer;
  url: string;
  stop(): Promise<void>;
}

/** Starts an indexer; `stop()` also closes its store. */
export async function startIndexer(options: StartIndexerOptions): Promise<RunningIndexer> {
  const { dataDir, databaseUrl, ...rest } = options;
  const store = await openIndexerStore({
    dataDir,
    ...(databaseUrl !== undefined ? { databaseUrl } : {}),
  });
  const lease = databaseUrl !== undefined ? postgresCrawlLease(databaseUrl) : soleCrawler;
  const indexer = new Indexer({ ...rest, store, lease });
  try {
    await indexer.start();
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    indexer,
    url: indexer.url,
    async stop() {
      await indexer.stop();
      await store.close();
    },
  };
}
