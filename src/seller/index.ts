/** The seller node: provider relays (openai-chat, openai-responses, anthropic-messages, openai-images, demo) behind libp2p. */
export { demoAnswer } from './demo.js';
export { createSellerHandler, type HandlerDeps, type RuntimeProvider } from './handler.js';
export { buildMetadata, providerName } from './metadata.js';
export {
  AdmitAllPayments,
  type SellerOffer,
  type SellerPaymentContext,
  type SellerPayments,
} from './payments.js';
export { PROVIDER_KINDS, type ProviderKind, type ProviderType, protocolsOf } from './providers.js';
export { upstreamUrl } from './relay.js';
export {
  runtimeProviders,
  type SellerHandle,
  type StartSellerOptions,
  startSeller,
} from './startSeller.js';
export { type MeterResult, UsageMeter, usageFromJson } from './usage.js';
export { messageJson, messageSse } from './wire/anthropicMessages.js';
export { chatCompletionJson, chatCompletionSse } from './wire/openaiChat.js';
export { responseJson, responseSse } from './wire/openaiResponses.js';
export { encodeSse, type SseEvent, SseParser } from './wire/sse.js';
export type { AnswerSpec } from './wire/types.js';
