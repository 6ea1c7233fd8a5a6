import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SellerTrailer } from '../network/index.js';
import { trailerOf } from './answerParts.js';
import type { AttemptOk } from './attempt.js';

const CLAIM: SellerTrailer = {
  usage: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 5 },
};

function answer(trailer: Promise<SellerTrailer | undefined>, whole?: Buffer): AttemptOk {
  return {
    kind: 'ok',
    response: { status: 200, headers: {}, body: (async function* () {})(), trailer },
    controller: new AbortController(),
    detach: () => undefined,
    paid: false,
    price: { inputMicroPerMillion: 0n, outputMicroPerMillion: 0n },
    inputTokens: async () => 0,
    sent: { path: '/v1/chat/completions', body: new Uint8Array(), multipart: false, atMs: 0 },
    ...(whole ? { whole } : {}),
  };
}

describe('the seller trailer of an answer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('of a whole answer (body read to its end) is awaited as it is, with no timer', async () => {
    vi.useFakeTimers();
    const claim = trailerOf(answer(Promise.resolve(CLAIM), Buffer.from('{}')));
    expect(vi.getTimerCount()).toBe(0);
    expect(await claim).toEqual(CLAIM);
    // A failed trailer is no claim.
    expect(await trailerOf(answer(Promise.reject(new Error('reset')), Buffer.alloc(0)))).toBe(
      undefined,
    );
  });

  it('of a stream is given up 2 s after it was asked for', async () => {
    vi.useFakeTimers();
    const claim = trailerOf(answer(new Promise(() => undefined)));
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await claim).toBe(undefined);
  });
});
