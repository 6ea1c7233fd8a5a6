/** The public snapshot: `svc indexer start` crawls sellers and the payments contract and serves `GET /stats`. */
export {
  type BuildSnapshotInput,
  buildSnapshot,
  type CrawledRecord,
  type Snapshot,
  type SnapshotIndexer,
} from './buildSnapshot.js';
export { ChainFollower, type ChainFollowerOptions, type ChainView } from './ChainFollower.js';
export { type ChainEvent, readChainEvents } from './chainEvents.js';
export { postgresCrawlLease, soleCrawler } from './crawlLease.js';
export { type EncodedSnapshot, encodeSnapshot } from './encodedSnapshot.js';
export { Indexer, type IndexerOptions } from './Indexer.js';
export { IndexerStore, openIndexerStore } from './IndexerStore.js';
export { foldChainEvents, type IndexedSellerStats } from './sellerStats.js';

/** Default port of `svc indexer start`. */
export const INDEXER_PORT = 8380;
