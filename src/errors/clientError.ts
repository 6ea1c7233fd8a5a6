/**
 * Answers what Node's HTTP parser refuses before any handler runs (header floods, smuggled
 * Content-Length + Transfer-Encoding framing, malformed request lines, header timeouts) with a
 * code from the error table instead of Node's bare status line, then closes the connection.
 */
import type { Duplex } from 'node:stream';
import { renderOpenAiError } from './render.js';
import { SvcError } from './SvcError.js';

/** The SvcError for an HTTP parser error (`clientError` event). */
export function svcErrorOfClientError(error: Error & { code?: string }): SvcError {
  if (error.code === 'HPE_HEADER_OVERFLOW') return new SvcError('headers_too_large');
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new SvcError('invalid_request', {
      message: 'The request was not received in time; send the whole request at once.',
    });
  }
  return new SvcError('invalid_request', {
    message: `The HTTP request is malformed (${error.code ?? 'parse error'}); the connection is closed.`,
  });
}

/** `server.on('clientError', answerClientError)`: one JSON error, then the socket is closed. */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A reset or a half-written response leaves nothing to answer.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const svcError = svcErrorOfClientError(error);
  const body = JSON.stringify(renderOpenAiError(svcError));
  socket.end(
    `HTTP/1.1 ${svcError.status} ${svcError.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}
