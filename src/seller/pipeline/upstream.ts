/**
 * The seller's one way to call an upstream API, text or media: undici's dispatcher
 * (upstreamExchange.ts) with the seller's own key and only allow-listed buyer headers; the buyer's
 * cancel aborts the call. Upstream failures map to svc errors in this one place:
 * - unreachable -> 502 `upstream_unavailable`;
 * - 5xx, 401, 403 -> 502 `upstream_error` (the seller's key or upstream is at fault, not the buyer);
 * - 429 -> 429 `seller_overloaded` with the upstream's Retry-After (default 5 s);
 * - an answer over the read cap or a 2xx body that is not a JSON object -> 502 `upstream_error`.
 * Other statuses (the buyer's own 4xx) are passed through.
 */
import { SvcError } from '../../errors/index.js';
import type { InboundRequest } from '../../network/index.js';
import { replaceMultipartField } from '../multipart.js';
import {
  forwardableRequestHeaders,
  forwardableResponseHeaders,
  type ProviderKind,
} from '../providers.js';
import { upstreamDispatcher } from '../upstreamRequest.js';
import type { Json, SellerBody, SellerRoute } from './route.js';
import { BodyTooLarge, type ExchangeHead, UpstreamExchange } from './upstreamExchange.js';

export interface UpstreamCall {
  kind: ProviderKind;
  url: string;
  apiKey: string | undefined;
  /** The buyer's headers (only allow-listed ones are forwarded). */
  headers: Record<string, string>;
  body: Uint8Array | string;
  contentType: string;
  signal: AbortSignal;
}

/** An upstream answer that is not a failure: head read, body not yet. */
export interface UpstreamAnswer {
  status: number;
  /** Response headers passed back to the buyer. */
  headers: Record<string, string>;
  contentType: string;
  body: AsyncIterable<Uint8Array> & { destroy(): unknown };
}

/** URL of a buyer path at the upstream: `/v1/chat/completions` -> `<baseUrl>/chat/completions`. */
export function upstreamUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path.replace(/^\/v1(?=\/)/, '')}`;
}

/**
 * The body sent upstream: the model becomes the upstream model (rewritten in place in a multipart
 * body, whose other bytes are relayed untouched); `extra` fields are added to a JSON body. A JSON
 * body that needs neither is relayed as the buyer's bytes, not re-encoded
 * (docs/decisions/145-request-path-pass-through.md).
 */
export function upstreamPayload(
  request: InboundRequest,
  body: SellerBody,
  route: SellerRoute,
  extra: Json = {},
): Uint8Array | string {
  const upstreamModel = route.service.upstreamModel ?? route.model;
  if (body.boundary !== undefined) {
    return replaceMultipartField(request.body, body.boundary, 'model', upstreamModel);
  }
  if (upstreamModel === body.json.model && Object.keys(extra).length === 0) return request.body;
  return JSON.stringify({ ...body.json, ...extra, model: upstreamModel });
}

/** The svc error an upstream status stands for, or undefined when the answer is relayed. */
export function upstreamFailure(
  status: number,
  headers: Record<string, string>,
): SvcError | undefined {
  if (status >= 500 || status === 401 || status === 403) {
    return new SvcError('upstream_error', {
      message: `The seller's upstream API answered ${status}.`,
      details: { upstreamStatus: status },
    });
  }
  if (status === 429) {
    return new SvcError('seller_overloaded', {
      message:
        "The seller's upstream API is rate limiting it. Retry shortly or pick another seller.",
      headers: { 'retry-after': headers['retry-after'] ?? '5' },
    });
  }
  return undefined;
}

/**
 * Sends the call; throws the svc error of a failed upstream (see the module comment). The answer's
 * body is the exchange itself (upstreamExchange.ts): its chunks, or its whole bytes by
 * `readUpstreamBody`.
 */
export async function callUpstream(call: UpstreamCall): Promise<UpstreamAnswer> {
  let exchange: UpstreamExchange;
  let head: ExchangeHead;
  try {
    const pending = upstreamDispatcher();
    const dispatcher = pending instanceof Promise ? await pending : pending;
    exchange = new UpstreamExchange(dispatcher, {
      url: call.url,
      headers: {
        ...(call.kind.defaults ?? {}),
        ...forwardableRequestHeaders(call.headers),
        ...(call.apiKey !== undefined ? call.kind.auth(call.apiKey) : {}),
        'content-type': call.contentType,
      },
      body: call.body,
      signal: call.signal,
    });
    head = await exchange.head;
  } catch (error) {
    if (call.signal.aborted) throw error;
    throw new SvcError('upstream_unavailable', { cause: error });
  }
  const headers = forwardableResponseHeaders(head.headers);
  const failure = upstreamFailure(head.status, headers);
  if (failure) {
    exchange.discard();
    throw failure;
  }
  const contentType = head.headers['content-type'];
  return {
    status: head.status,
    headers,
    contentType: Array.isArray(contentType) ? contentType.join(', ') : (contentType ?? ''),
    body: exchange,
  };
}

/** Reads a whole upstream body: 502 `upstream_error` past `maxBytes` or when the body breaks. */
export async function readUpstreamBody(answer: UpstreamAnswer, maxBytes: number): Promise<Buffer> {
  try {
    return answer.body instanceof UpstreamExchange
      ? await answer.body.readAll(maxBytes)
      : await iterateAll(answer.body, maxBytes);
  } catch (error) {
    if (error instanceof SvcError) throw error;
    if (error instanceof BodyTooLarge) throw tooLarge();
    throw new SvcError('upstream_error', {
      message: "The seller's upstream API broke off its answer.",
      cause: error,
    });
  }
}

function tooLarge(): SvcError {
  return new SvcError('upstream_error', { message: 'The upstream answer is too large.' });
}

async function iterateAll(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A 2xx upstream body as a JSON object: 502 `upstream_error` when it is not one. */
export function upstreamJson(body: Uint8Array): Record<string, unknown> {
  try {
    // A view, not a copy, of the bytes.
    const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // below
  }
  throw new SvcError('upstream_error', {
    message: "The seller's upstream API returned malformed JSON.",
  });
}
