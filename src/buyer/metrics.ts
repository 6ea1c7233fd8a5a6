/** Prometheus metrics of one buyer (own registry, so several buyers in one process stay apart). */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export class BuyerMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'svc_buyer_requests_total',
    help: 'Requests by route and status',
    labelNames: ['route', 'status'],
    registers: [this.registry],
  });
  readonly errors = new Counter({
    name: 'svc_buyer_errors_total',
    help: 'Error responses by code',
    labelNames: ['code'],
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'svc_buyer_request_duration_seconds',
    help: 'Request latency',
    labelNames: ['route', 'streamed'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });
  readonly tokens = new Counter({
    name: 'svc_buyer_tokens_total',
    help: 'Tokens by kind (input, cached_input, output)',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly spend = new Counter({
    name: 'svc_buyer_spend_micro_usd_total',
    help: 'Estimated spend in micro-USD',
    registers: [this.registry],
  });
  readonly peers = new Gauge({
    name: 'svc_buyer_peers',
    help: 'Cached peers by state',
    labelNames: ['state'],
    registers: [this.registry],
  });
  readonly receipts = new Counter({
    name: 'svc_buyer_receipts_total',
    help: "Sellers' receipts checked, per seller and outcome (verified, or why refused)",
    labelNames: ['peer_id', 'outcome'],
    registers: [this.registry],
  });
  readonly sellerFailures = new Counter({
    name: 'svc_buyer_seller_failures_total',
    help: 'Failed attempts per seller and reason',
    labelNames: ['peer_id', 'reason'],
    registers: [this.registry],
  });
}
