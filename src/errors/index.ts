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
export {
  type AnthropicErrorBody,
  type ErrorStyle,
  errorStyleForPath,
  type OpenAiErrorBody,
  renderAnthropicError,
  renderError,
  renderOpenAiError,
} from './render.js';
export { isSvcError, SvcError, type SvcErrorOptions, toSvcError } from './SvcError.js';
