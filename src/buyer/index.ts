/** Buyer: the local proxy: HTTP server, routing with failover, catalog, control plane, metrics. */
export { BuyerService } from './BuyerService.js';
export type { EvidenceStore } from './evidence.js';
export { formatsTranslator } from './formatsTranslator.js';
export { inProcessBuyer } from './inProcess.js';
export {
  type BuyerPayments,
  type CompleteInput,
  type CompleteOutcome,
  type LatePaymentInput,
  NO_PAYMENTS,
  type PrepareInput,
  UNPAID_DEV_PAYMENTS,
} from './payments.js';
export type { RequestRecord } from './requestRecords.js';
export { type RunBuyerNodeOptions, type RunningBuyerNode, runBuyerNode } from './runBuyerNode.js';
export { type RunningBuyer, type StartBuyerOptions, startBuyer } from './startBuyer.js';
export { countRequestTokens, countTextTokens } from './tokenCount.js';
export { PROTOCOL_PATHS, passThroughTranslator, type Translator } from './translator.js';
