/** Prometheus metrics of one indexer (own registry, so several indexers in one process stay apart). */
import { Counter, Gauge, Registry } from 'prom-client';

export class IndexerMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'svc_indexer_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'status'],
    registers: [this.registry],
  });
  readonly rejected = new Gauge({
    name: 'svc_indexer_records_rejected_total',
    help: 'Seller records refused and never served, by reason (too_large, bad_signature, wrong_peer, stale, ...)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly peers = new Gauge({
    name: 'svc_indexer_peers',
    help: 'Verified sellers in the snapshot being served',
    registers: [this.registry],
  });
  readonly snapshotBuiltAt = new Gauge({
    name: 'svc_indexer_snapshot_built_timestamp_seconds',
    help: 'When the snapshot being served was built',
    registers: [this.registry],
  });
  readonly snapshotBuildSeconds = new Gauge({
    name: 'svc_indexer_snapshot_build_seconds',
    help: 'How long the last snapshot build took',
    registers: [this.registry],
  });
  readonly chainLastBlock = new Gauge({
    name: 'svc_indexer_chain_last_block',
    help: 'Last block whose payments events are indexed',
    registers: [this.registry],
  });
  readonly chainRefreshedAt = new Gauge({
    name: 'svc_indexer_chain_refreshed_timestamp_seconds',
    help: 'When the chain was last read successfully',
    registers: [this.registry],
  });
  readonly chainErrors = new Counter({
    name: 'svc_indexer_chain_errors_total',
    help: 'Chain reads that failed (the last good stats stay served)',
    registers: [this.registry],
  });
  readonly crawling = new Gauge({
    name: 'svc_indexer_crawling',
    help: '1 while this process holds the crawl lease',
    registers: [this.registry],
  });
}
