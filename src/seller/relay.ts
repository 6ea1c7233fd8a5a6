/**
 * Relays one request to the upstream API with undici: the seller's own key, the rewritten
 * model, only allow-listed headers. The buyer's cancel aborts the upstream call (its socket
 * closes). Non-streaming answers are read whole so malformed JSON becomes a clean 502 before
 * any byte reaches the buyer; streams pass through chunk by chunk.
 */
import type { request as undiciRequest } from 'undici';
import { SvcError } from '../errors/index.js';
import type { ApiProtocol } from '../network/index.js';
import {
  forwardableRequestHeaders,
  forwardableResponseHeaders,
  type ProviderKind,
} from './providers.js';
import { upstreamRequest } from './upstreamRequest.js';

/** Largest non-streaming upstream answer we buffer. */
const MAX_UPSTREAM_JSON_BYTES = 64 * 1024 * 1024;

export interface RelayInput {
  kind: ProviderKind;
  baseUrl: string;
  apiKey: string | undefined;
  path: string;
  protocol: ApiProtocol;
  headers: Record<string, string>;
  /** A JSON body, or raw bytes with their content type (multipart image edits). */
  body: Record<string, unknown> | { raw: Uint8Array; contentType: string };
  signal: AbortSignal;
}

export interface RelayResult {
  status: number;
  headers: Record<string, string>;
  streaming: boolean;
  /** Whole body (non-streaming) or the live stream. */
  body: Uint8Array | AsyncIterable<Uint8Array>;
}

/** URL of a buyer path at the upstream: `/v1/chat/completions` -> `<baseUrl>/chat/completions`. */
export function upstreamUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path.replace(/^\/v1(?=\/)/, '')}`;
}

/** Sends the request upstream; throws SvcError for failures the buyer should see as 5xx. */
export async function relay(input: RelayInput): Promise<RelayResult> {
  const headers: Record<string, string> = {
    ...(input.kind.defaults ?? {}),
    ...forwardableRequestHeaders(input.headers),
    ...(input.apiKey !== undefined ? input.kind.auth(input.apiKey) : {}),
    'content-type': 'raw' in input.body ? String(input.body.contentType) : 'application/json',
  };
  const payload = 'raw' in input.body ? (input.body.raw as Uint8Array) : JSON.stringify(input.body);
  let response: Awaited<ReturnType<typeof undiciRequest>>;
  try {
    const request = await upstreamRequest();
    response = await request(upstreamUrl(input.baseUrl, input.path), {
      method: 'POST',
      headers,
      body: payload,
      signal: input.signal,
    });
  } catch (error) {
    if (input.signal.aborted) throw error;
    throw new SvcError('upstream_unavailable', { cause: error });
  }
  const status = response.statusCode;
  const responseHeaders = forwardableResponseHeaders(response.headers);
  const contentType = String(response.headers['content-type'] ?? '');
  if (status >= 500 || status === 401 || status === 403) {
    await response.body.dump().catch(() => undefined);
    throw new SvcError('upstream_error', {
      message: `The seller's upstream API answered ${status}.`,
      details: { upstreamStatus: status },
    });
  }
  if (status === 429) {
    await response.body.dump().catch(() => undefined);
    throw new SvcError('seller_overloaded', {
      message:
        "The seller's upstream API is rate limiting it. Retry shortly or pick another seller.",
      headers: { 'retry-after': responseHeaders['retry-after'] ?? '5' },
    });
  }
  if (status === 200 && contentType.includes('text/event-stream')) {
    return { status, headers: responseHeaders, streaming: true, body: response.body };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_UPSTREAM_JSON_BYTES) {
      response.body.destroy();
      throw new SvcError('upstream_error', { message: 'The upstream answer is too large.' });
    }
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  if (status >= 200 && status < 300) {
    try {
      JSON.parse(body.toString('utf8'));
    } catch {
      throw new SvcError('upstream_error', {
        message: "The seller's upstream API returned malformed JSON.",
      });
    }
  }
  return { status, headers: responseHeaders, streaming: false, body };
}
