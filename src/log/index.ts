/** Logging and redaction: one `redact()` shared by the logger and the error base. */
export {
  type CreateLoggerOptions,
  createLogger,
  LOG_LEVELS,
  type Logger,
  type LogLevel,
  silentLogger,
} from './logger.js';
export { redact, redactHeaders, SECRET_HEADERS } from './redact.js';
export { logRequestLine, type RequestLine } from './requestLine.js';
