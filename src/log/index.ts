/** Logging, and the secret headers kept out of it (the text redaction is src/errors/redact.ts). */
export {
  type CreateLoggerOptions,
  createLogger,
  LOG_LEVELS,
  type Logger,
  type LogLevel,
  silentLogger,
} from './logger.js';
export { redactHeaders, SECRET_HEADERS } from './redact.js';
export { logRequestLine, type RequestLine } from './requestLine.js';
