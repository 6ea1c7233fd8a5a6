/** Helpers for request-protocol tests: a request to send and an answer's body read whole. */
import type { SellerResponse } from '../types.js';

const text = new TextEncoder();

/** Reads an answer's body to its end, as UTF-8 text. */
export async function readAll(response: SellerResponse): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** A POST of `body` (text) to `path`, cancelled by `signal` when given. */
export function textRequest(
  path: string,
  body = '',
  options: { signal?: AbortSignal | undefined; headers?: Record<string, string> } = {},
) {
  return {
    method: 'POST',
    path,
    headers: options.headers ?? {},
    body: text.encode(body),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}
