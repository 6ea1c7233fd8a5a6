/**
 * Relaying the buyer's answer to the client (the remote-buyer mode): a small complete answer in
 * one write and settled at once, else streamed through untouched; and what the log shows of how
 * it ended.
 */
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ERROR_CODES, isErrorCode } from '../../errors/index.js';
import { writeChunk } from '../../http/index.js';
import { type CostReport, SseUsageScanner } from './costReport.js';
import { responseHeaders } from './forwardHeaders.js';
import type { LogFacts } from './requestLog.js';
import { afterSettling, type Billing, settleRequest } from './settleRequest.js';

/** Answers up to this size are sent in one write with their headers. */
const SMALL_BODY_BYTES = 64 * 1024;

/** How a relayed answer ended, when it was streamed rather than sent in one write. */
export interface RelayEnd {
  buyerBroke: boolean;
  scanner: SseUsageScanner | null;
  /** The error code of an error answer's body, when it was read to its end. */
  facts: LogFacts;
}

/**
 * Sends the answer to the client: a small complete one in one write, then settled (`settled`: what
 * the log shows); else streamed through, returning how the stream ended.
 */
export async function relayAnswer(
  billing: Billing,
  res: ServerResponse,
  upstream: Dispatcher.ResponseData,
  streamed: boolean,
  report: CostReport | null,
): Promise<RelayEnd | { settled: LogFacts }> {
  res.writeHead(upstream.statusCode, responseHeaders(upstream.headers));
  const scanner = streamed ? new SseUsageScanner() : null;
  let facts: LogFacts = {};
  try {
    const declaredLength = Number(upstream.headers['content-length'] ?? Number.NaN);
    if (!streamed && declaredLength <= SMALL_BODY_BYTES) {
      // A small complete answer goes out with its headers in one write (no stream to keep open).
      const body = Buffer.from(await upstream.body.arrayBuffer());
      const answered = upstream.statusCode >= 400 ? { errorCode: errorCodeOf(body) } : {};
      res.end(body);
      return { settled: afterSettling(answered, await settleRequest(billing, report)) };
    }
    const errorBody: Buffer[] | null = upstream.statusCode >= 400 && !streamed ? [] : null;
    for await (const chunk of upstream.body) {
      scanner?.push(chunk as Buffer);
      if (errorBody && errorBody.length < 16) errorBody.push(chunk as Buffer);
      if (!(await writeChunk(res, chunk as Buffer))) break;
    }
    if (!res.destroyed) res.end();
    if (errorBody) facts = { errorCode: errorCodeOf(Buffer.concat(errorBody)) };
  } catch {
    // The client went away, or the buyer cut the stream: settle what was delivered.
    if (!res.destroyed && !res.writableEnded) {
      // Mid-answer there is no way to send an error: close the connection so the client sees it.
      res.destroy();
      return { buyerBroke: true, scanner, facts };
    }
  }
  return { buyerBroke: false, scanner, facts };
}

/** How a streamed answer ended: the buyer broke, the seller failed, or the client left. */
export function answerEndFacts(
  res: ServerResponse,
  upstream: Dispatcher.ResponseData,
  relayed: RelayEnd,
): LogFacts {
  const streamFailure = relayed.scanner?.report?.errorCode;
  if (relayed.buyerBroke) return { status: 502, errorCode: 'buyer_unavailable' };
  if (streamFailure) {
    // The seller failed after the first byte: the client got its format's error event.
    const status = isErrorCode(streamFailure) ? ERROR_CODES[streamFailure].status : 502;
    return { status, errorCode: streamFailure };
  }
  if (res.destroyed && !res.writableFinished) {
    upstream.body.destroy();
    return { status: 499, errorCode: 'request_cancelled' };
  }
  return {};
}

/** The `code` of an OpenAI- or Anthropic-style error body, for the log. */
function errorCodeOf(body: Buffer): string | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as {
      error?: { code?: unknown; type?: unknown };
    };
    const code = parsed.error?.code ?? parsed.error?.type;
    return typeof code === 'string' ? code.slice(0, 64) : null;
  } catch {
    return null;
  }
}
