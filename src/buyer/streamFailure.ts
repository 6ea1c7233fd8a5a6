/**
 * A stream that fails after its first byte (docs/decisions/110-truthful-stream-failures.md): the
 * client gets its format's error event, which each official SDK raises: chat-completions
 * `data: {"error":…}` with no `[DONE]`, responses an `error` event whose data carries `error`,
 * messages `event: error` in Anthropic's shape.
 */
import { errorMessage, SvcError } from '../errors/index.js';
import {
  errorOfThrown,
  formatOfProtocol,
  formatSse,
  renderErrorBody,
  type StreamError,
} from '../formats/index.js';
import type { ApiProtocol } from '../network/index.js';
import { TransportError } from '../network/index.js';
import type { StreamVerdict } from './usage.js';

/** Why a stream failed, as the client and the records see it. */
export function streamFailureOf(
  peerId: string,
  thrown: unknown,
  verdict: StreamVerdict,
): SvcError | undefined {
  // A failure after the final event cost the client nothing.
  if (verdict === 'ended') return undefined;
  if (thrown !== undefined) {
    const timeout = thrown instanceof TransportError && thrown.failure === 'timeout';
    const why = errorMessage(thrown);
    return new SvcError(timeout ? 'seller_timeout' : 'seller_error', {
      message: `Seller ${peerId} failed mid-stream: ${why}.`,
      details: { peerId },
    });
  }
  if (verdict === 'seller_error') {
    return new SvcError('upstream_error', {
      message: `Seller ${peerId} ended the stream with an error.`,
      details: { peerId },
    });
  }
  if (verdict === 'malformed') {
    return new SvcError('invalid_seller_response', {
      message: `Seller ${peerId} sent a stream event that could not be understood.`,
      details: { peerId },
    });
  }
  return new SvcError('seller_error', {
    message: `Seller ${peerId}'s stream ended before its final event.`,
    details: { peerId },
  });
}

/** The SSE bytes of the client format's error event. */
export function streamErrorBytes(
  protocol: ApiProtocol,
  error: SvcError,
  sequenceNumber: number,
): string {
  const format = formatOfProtocol(protocol) ?? 'chat';
  const neutral: StreamError = errorOfThrown(error);
  const body = renderErrorBody(format, neutral);
  if (format === 'messages') return formatSse({ event: 'error', data: JSON.stringify(body) });
  if (format === 'chat') return formatSse({ data: JSON.stringify(body) });
  // The responses event, with the error object too: the openai SDK raises on a data `error`.
  return formatSse({
    event: 'error',
    data: JSON.stringify({
      type: 'error',
      code: neutral.code,
      message: neutral.message,
      param: neutral.param ?? null,
      sequence_number: sequenceNumber,
      ...body,
    }),
  });
}

/** True for the chat `[DONE]` line, which must not follow an error. */
export function isDoneChunk(chunk: Uint8Array): boolean {
  return Buffer.from(chunk).toString('utf8').trim() === 'data: [DONE]';
}
