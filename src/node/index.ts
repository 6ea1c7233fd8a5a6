/**
 * Composition: every long-lived service from config, each a `RunningService` (service.ts): the
 * buyer node (proxy, libp2p, payments when a chain answers), the seller node (relay, payments for
 * priced offers), the gateway node (its buyer in process, its tunnel), the indexer, the bootstrap
 * node and the tunnel relay. The command layer calls these; the capabilities they assemble never
 * import this folder (docs/decisions/186-one-service-contract.md).
 */
export { configuredChain } from './configuredChain.js';
export type { RunningService } from './service.js';
export { type BootstrapNode, startBootstrapNode } from './startBootstrapNode.js';
export {
  type PaidBuyerNode,
  type StartPaidBuyerOptions,
  startPaidBuyerNode,
} from './startBuyerNode.js';
export {
  type GatewayNode,
  type StartGatewayNodeOptions,
  startGatewayNode,
} from './startGatewayNode.js';
export {
  type IndexerNode,
  type StartIndexerNodeOptions,
  startIndexerNode,
} from './startIndexerNode.js';
export {
  hasPricedOffers,
  type PaidSellerHandle,
  type StartPaidSellerOptions,
  startPaidSeller,
} from './startSellerNode.js';
export {
  type StartTunnelRelayNodeOptions,
  startTunnelRelayNode,
  type TunnelRelayNode,
} from './startTunnelRelayNode.js';
