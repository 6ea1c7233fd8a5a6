/**
 * Relays a media request (image JSON or multipart, video job, decision) upstream and reads the
 * whole answer as bytes: unlike the text relay, the answer may be binary (`video/mp4`).
 */
import type { request as undiciRequest } from 'undici';
import { SvcError } from '../../errors/index.js';
import {
  forwardableRequestHeaders,
  forwardableResponseHeaders,
  type ProviderKind,
} from '../providers.js';
import { upstreamRequest } from '../upstreamRequest.js';

/** Largest upstream answer buffered (a short video fits easily). */
const MAX_UPSTREAM_BYTES = 256 * 1024 * 1024;

export interface RawRelayResult {
  status: number;
  headers: Record<string, string>;
  contentType: string;
  body: Buffer;
}

export async function relayRaw(input: {
  kind: ProviderKind;
  url: string;
  apiKey: string | undefined;
  headers: Record<string, string>;
  body: Uint8Array;
  contentType: string;
  signal: AbortSignal;
}): Promise<RawRelayResult> {
  let response: Awaited<ReturnType<typeof undiciRequest>>;
  try {
    const request = await upstreamRequest();
    response = await request(input.url, {
      method: 'POST',
      headers: {
        ...(input.kind.defaults ?? {}),
        ...forwardableRequestHeaders(input.headers),
        ...(input.apiKey !== undefined ? input.kind.auth(input.apiKey) : {}),
        'content-type': input.contentType,
      },
      body: input.body,
      signal: input.signal,
    });
  } catch (error) {
    if (input.signal.aborted) throw error;
    throw new SvcError('upstream_unavailable', { cause: error });
  }
  const status = response.statusCode;
  const headers = forwardableResponseHeaders(response.headers);
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
      headers: { 'retry-after': headers['retry-after'] ?? '5' },
    });
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_UPSTREAM_BYTES) {
      response.body.destroy();
      throw new SvcError('upstream_error', { message: 'The upstream answer is too large.' });
    }
    chunks.push(chunk);
  }
  return {
    status,
    headers,
    contentType: String(response.headers['content-type'] ?? 'application/json'),
    body: Buffer.concat(chunks),
  };
}
