/**
 * `svc indexer start`: the indexer's store (SQLite in the data dir, or a shared PostgreSQL), its
 * crawl lease (one crawler among several indexers on one database) and the indexer, from config.
 */
import type { PaymentsContract } from '../chain/index.js';
import type { NetworkConfig } from '../config/index.js';
import {
  Indexer,
  type IndexerOptions,
  openIndexerStore,
  postgresCrawlLease,
  soleCrawler,
} from '../indexer/index.js';
import type { Logger } from '../log/index.js';
import type { RunningService } from './service.js';

export interface StartIndexerNodeOptions
  extends Omit<IndexerOptions, 'store' | 'lease' | 'network' | 'contract'> {
  network: NetworkConfig;
  contract: PaymentsContract;
  dataDir: string;
  /** PostgreSQL URL shared by several indexers; absent = SQLite in the data dir. */
  databaseUrl?: string;
  logger?: Logger;
}

export interface IndexerNode extends RunningService {
  indexer: Indexer;
  url: string;
}

/** Starts an indexer; `stop()` also closes its store. */
export async function startIndexerNode(options: StartIndexerNodeOptions): Promise<IndexerNode> {
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
