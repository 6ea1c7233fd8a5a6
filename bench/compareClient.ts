/**
 * One client of a bench/compare.bench.ts target (a pool, the path it answers on, its headers), and
 * requests that check the answer was whole: a JSON answer with `usage`, a stream to its end.
 */
import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';

export interface Client {
  pool: Pool;
  path: string;
  headers: Record<string, string>;
}

/** One request; resolves once the whole answer is read. Throws on a non-200 answer. */
export async function send(client: Client, body: string): Promise<void> {
  const response = await client.pool.request({
    method: 'POST',
    path: client.path,
    headers: { 'content-type': 'application/json', ...client.headers },
    body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${text}`);
  if (!text.includes('"usage"')) throw new Error(`no usage in the answer: ${text.slice(0, 200)}`);
}

/** One streamed request: time to the first body byte and to the last. */
export async function sendStream(
  client: Client,
  body: string,
): Promise<{ first: number; last: number }> {
  const start = performance.now();
  const response = await client.pool.request({
    method: 'POST',
    path: client.path,
    headers: { 'content-type': 'application/json', ...client.headers },
    body,
  });
  let first = 0;
  let text = '';
  for await (const chunk of response.body) {
    if (first === 0) first = performance.now() - start;
    text += chunk.toString();
  }
  const last = performance.now() - start;
  if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${text}`);
  if (!text.includes('[DONE]') && !text.includes('message_stop'))
    throw new Error(`stream did not finish: ${text.slice(-200)}`);
  return { first, last };
}
