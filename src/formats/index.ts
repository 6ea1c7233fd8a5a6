/**
 * Format translation between OpenAI chat-completions, OpenAI responses and Anthropic messages:
 * requests, non-streaming responses, streams and errors, through one internal conversation model
 * (docs/decisions/020). Pure functions: no I/O, no servers, no network, no chain.
 */

export { parseSellerJson } from './check.js';
export {
  errorOfBody,
  errorOfThrown,
  errorResponseOf,
  renderErrorBody,
  streamErrorEvents,
  translateError,
} from './errors.js';
export { isFailedAnswer, wholeAnswerFinished } from './failedAnswer.js';
export { capMaxOutputTokens, maxOutputTokensOf } from './maxTokens.js';
export { BUDGET_OF_EFFORT, DEFAULT_MAX_TOKENS } from './messages/renderRequest.js';
export type {
  Conversation,
  ModelResponse,
  Part,
  StopReason,
  ToolDef,
  TranslateContext,
  Turn,
  Usage,
} from './model.js';
export {
  chatFinishOf,
  messagesStopOf,
  responsesEndOf,
  stopOfChat,
  stopOfMessages,
  stopOfResponses,
} from './reasons.js';
export {
  countRequestTokens,
  countRequestTokensAsync,
  requestTokensBound,
  textOf,
} from './requestTokens.js';
export { formatSse, type ParseSseOptions, parseSse, SseDecoder, type SseEvent } from './sse.js';
export { createStreamParser } from './stream/codecs.js';
export type { StreamError, StreamPart } from './stream/parts.js';
export {
  type ResponseStreamOptions,
  renderResponseStream,
} from './stream/responseAsStream.js';
export {
  countConversationTokens,
  countConversationTokensAsync,
  countTextTokens,
  countTextTokensAsync,
  countTokens,
  countTokensAsync,
  estimateInputTokens,
  estimateInputTokensAsync,
  inputTokensBound,
  TOKENS_PER_IMAGE,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_REPLY,
  TOKENS_PER_TOOL,
} from './tokens.js';
export {
  parseRequest,
  renderRequest,
  type TranslatedRequest,
  translateRequest,
  validateRequest,
  withStreamUsage,
} from './translateRequest.js';
export {
  assembleResponse,
  parseResponse,
  renderResponse,
  responseAsStream,
  translateResponse,
} from './translateResponse.js';
export { translateStream } from './translateStream.js';
export {
  API_FORMATS,
  type ApiFormat,
  type ApiProtocol,
  errorStyleOfFormat,
  formatOfPath,
  formatOfProtocol,
  pathOfFormat,
  protocolOfFormat,
} from './types.js';
export {
  createStreamUsageAccumulator,
  reportedUsageOf,
  type StreamUsageAccumulator,
  type UsageOptions,
  usageOf,
} from './usage.js';
