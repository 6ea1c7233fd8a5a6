/** The one error base of svc: a stable code, an HTTP status, a message that says what to do. */

import { ERROR_CODES, type ErrorCode } from './codes.js';
import { redact } from './redact.js';
import { retryCanFix, SHOULD_RETRY_HEADER } from './retry.js';

export interface SvcErrorOptions {
  /** Overrides the code's default message. Secrets are redacted from it. */
  message?: string;
  /** Structured facts a client may act on (shown in the error body). */
  details?: Record<string, unknown>;
  /** Overrides the code's default status (e.g. to pass through a seller's status). */
  status?: number;
  /** Extra response headers (e.g. Retry-After). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error a user can see. Handlers throw it; one renderer turns it into a response. */
export class SvcError extends Error {
  override name = 'SvcError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, options: SvcErrorOptions = {}) {
    super(redact(options.message ?? ERROR_CODES[code].message), { cause: options.cause });
    this.code = code;
    this.status = options.status ?? ERROR_CODES[code].status;
    this.details = options.details;
    // Set on every error a retry cannot fix, so no SDK spends minutes retrying it.
    this.headers = retryCanFix(code, this.status)
      ? options.headers
      : { [SHOULD_RETRY_HEADER]: 'false', ...(options.headers ?? {}) };
  }
}

/** True when `value` is an SvcError (also across duplicated module instances). */
export function isSvcError(value: unknown): value is SvcError {
  return (
    value instanceof SvcError ||
    (value instanceof Error && value.name === 'SvcError' && 'code' in value)
  );
}

/** Wraps anything thrown into an SvcError, keeping SvcErrors as they are. */
export function toSvcError(value: unknown): SvcError {
  if (isSvcError(value)) return value;
  return new SvcError('internal_error', { cause: value });
}
