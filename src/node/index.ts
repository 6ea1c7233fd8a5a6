/**
 * Composition: a whole buyer node (proxy, libp2p, payments when a chain answers), seller node
 * (relay, payments for priced offers) or gateway node (with its buyer in process), from config. The command layer calls these; the
 * capabilities they assemble (buyer, seller, payments, chain, network) never import this folder.
 */
export { configuredChain } from './configuredChain.js';
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
  hasPricedOffers,
  type PaidSellerHandle,
  type StartPaidSellerOptions,
  startPaidSeller,
} from './startSellerNode.js';
