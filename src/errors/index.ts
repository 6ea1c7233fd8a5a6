/** Errors: every stable error code with its HTTP status, the SvcError base, and body renderers. */
export { answerClientError, svcErrorOfClientError } from './clientError.js';
export {
  type AnthropicErrorType,
  anthropicTypeForStatus,
  ERROR_CODES,
  type ErrorCode,
  type ErrorCodeSpec,
  isErrorCode,
  type OpenAiErrorType,
  openAiTypeForStatus,
} from './codes.js';
export { asError, errorFirstLine, errorMessage } from './message.js';
export { redact } from './redact.js';
export {
  type AnthropicErrorBody,
  type BothStylesErrorBody,
  type ErrorStyle,
  errorStyleForPath,
  type OpenAiErrorBody,
  renderAnthropicError,
  renderBothStyles,
  renderError,
  renderOpenAiError,
} from './render.js';
export { retryCanFix, SHOULD_RETRY_HEADER } from './retry.js';
export { isSvcError, SvcError, type SvcErrorOptions, toSvcError } from './SvcError.js';
