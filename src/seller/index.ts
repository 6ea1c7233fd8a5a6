/** The seller node: provider relays (openai-chat, openai-responses, anthropic-messages, openai-images, video, systemone, demo) behind libp2p. */
export { demoAnswer } from './demo.js';
export { createSellerHandler, type HandlerDeps, type RuntimeProvider } from './handler.js';
export { buildMetadata, providerName } from './metadata.js';
export {
  AdmitAllPayments,
  type SellerOffer,
  type SellerPaymentContext,
  type SellerPayments,
} from './payments.js';
export { upstreamUrl } from './pipeline/upstream.js';
export { PROVIDER_KINDS, type ProviderKind, type ProviderType, protocolsOf } from './providers.js';
export {
  runtimeProviders,
  type SellerHandle,
  type StartSellerOptions,
  startSeller,
} from './startSeller.js';
export { type MeterResult, UsageMeter, usageFromJson } from './usage.js';
