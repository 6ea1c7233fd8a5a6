/**
 * Seller errors across formats: a seller's error body (OpenAI or Anthropic style) becomes the
 * client's style with the same status and meaning; an error inside a stream becomes the client
 * format's in-stream error event.
 */
import {
  anthropicTypeForStatus,
  isSvcError,
  openAiTypeForStatus,
  renderError,
  toSvcError,
} from '../errors/index.js';
import { isRecord } from './check.js';
import type { SseEvent } from './sse.js';
import type { StreamError } from './stream/parts.js';
import type { ApiFormat } from './types.js';

/** Status of an error `type` (Anthropic's documented table; OpenAI's types where they differ). */
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  insufficient_quota: 429,
  api_error: 500,
  server_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/**
 * A neutral error of a seller error body in either style. `status` is the HTTP status when known
 * (0 inside streams: derived from the error type).
 */
export function errorOfBody(status: number, body: unknown): StreamError {
  const inner = isRecord(body) && isRecord(body.error) ? body.error : isRecord(body) ? body : {};
  const type = typeof inner.type === 'string' ? inner.type : undefined;
  const code = typeof inner.code === 'string' ? inner.code : type;
  const message =
    typeof inner.message === 'string' && inner.message.length > 0
      ? inner.message
      : `The seller answered with status ${status || 'error'}.`;
  const derived = (type && STATUS_OF_TYPE[type]) || (code && STATUS_OF_TYPE[code]) || 500;
  const out: StreamError = {
    status: status >= 400 ? status : derived,
    message,
    code: code ?? 'upstream_error',
  };
  if (typeof inner.param === 'string') out.param = inner.param;
  return out;
}

/** The neutral error of anything thrown (SvcErrors keep their code and status). */
export function errorOfThrown(error: unknown): StreamError {
  const svc = isSvcError(error) ? error : toSvcError(error);
  const out: StreamError = { status: svc.status, message: svc.message, code: svc.code };
  const param = svc.details?.param;
  if (typeof param === 'string') out.param = param;
  return out;
}

/** An error body in a format's style. */
export function renderErrorBody(format: ApiFormat, error: StreamError): Record<string, unknown> {
  if (format === 'messages') {
    return {
      type: 'error',
      error: {
        type: anthropicTypeForStatus(error.status),
        message: error.message,
        code: error.code,
      },
    };
  }
  return {
    error: {
      message: error.message,
      type: openAiTypeForStatus(error.status),
      code: error.code,
      param: error.param ?? null,
    },
  };
}

/**
 * Translates a seller's error response (status + body in the seller's format) into the client's
 * format, keeping the status. A body that is not an error object still yields a clean error.
 */
export function translateError(
  status: number,
  body: unknown,
  from: ApiFormat,
  to: ApiFormat,
): { status: number; body: Record<string, unknown> } {
  const code = status >= 400 ? status : 502;
  if (from === to && isRecord(body) && isRecord(body.error)) return { status: code, body };
  return { status: code, body: renderErrorBody(to, errorOfBody(code, body)) };
}

/** An SvcError (or anything thrown) rendered as the client's error body with its status. */
export function errorResponseOf(
  error: unknown,
  format: ApiFormat,
): { status: number; body: Record<string, unknown> } {
  const svc = toSvcError(error);
  return {
    status: svc.status,
    body: renderError(svc, format === 'messages' ? 'anthropic' : 'openai') as unknown as Record<
      string,
      unknown
    >,
  };
}

/** The in-stream error events of a format (the stream must end after them). */
export function streamErrorEvents(
  format: ApiFormat,
  error: StreamError,
  sequenceNumber = 0,
): SseEvent[] {
  if (format === 'messages') {
    return [{ event: 'error', data: JSON.stringify(renderErrorBody('messages', error)) }];
  }
  if (format === 'chat') {
    return [{ data: JSON.stringify(renderErrorBody('chat', error)) }, { data: '[DONE]' }];
  }
  return [
    {
      event: 'error',
      data: JSON.stringify({
        type: 'error',
        code: error.code,
        message: error.message,
        param: error.param ?? null,
        sequence_number: sequenceNumber,
      }),
    },
  ];
}
