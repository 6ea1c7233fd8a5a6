/**
 * Media requests on the shared send path: an answer over `buyer.answerLimitBytes`, a body cut
 * midway and a seller failing before its head all fail over, penalise the seller and release the
 * prepared payment (none stays open); token-priced media are checked against the buyer's count.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompleteInput, BuyerPayments as PaymentsPort } from '../payments.js';
import type { ScriptedResponse } from '../testing/memoryNetwork.js';
import { startTestBuyer, type TestBuyer } from '../testing/testBuyer.js';

/** Payments that count what is open: prepared and neither released nor completed. */
function countingPayments() {
  const open = new Map<string, number>();
  const completed: CompleteInput[] = [];
  const released: string[] = [];
  const bump = (id: string, by: number) => open.set(id, (open.get(id) ?? 0) + by);
  const payments: PaymentsPort = {
    prepare: async (input) => {
      bump(input.requestId, 1);
      return { channel: 'test' };
    },
    complete: async (input) => {
      bump(input.requestId, -1);
      completed.push(input);
    },
    release: (requestId) => {
      bump(requestId, -1);
      released.push(requestId);
    },
  };
  const inFlight = () => [...open.values()].reduce((sum, n) => sum + n, 0);
  return { payments, completed, released, inFlight };
}

const image = (bytes: number) => ({
  created: 1,
  data: [{ b64_json: 'A'.repeat(bytes) }],
});

function imageReply(bytes: number): ScriptedResponse {
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(image(bytes)),
  };
}

function cutReply(): ScriptedResponse {
  const whole = JSON.stringify(image(4000));
  async function* body() {
    yield whole.slice(0, 2000);
    throw new Error('connection reset');
  }
  return { status: 200, headers: { 'content-type': 'application/json' }, body: body() };
}

let t: TestBuyer;
let counting: ReturnType<typeof countingPayments>;
let first: string;
let second: string;

const imageService = (imageUsd?: number) => ({
  id: 'gpt-image-1',
  protocols: ['openai-images' as const],
  pricing: { inputUsdPerMillion: 5, outputUsdPerMillion: 40 },
  ...(imageUsd !== undefined ? { unitBilling: { imageUsd } } : {}),
});

beforeEach(async () => {
  counting = countingPayments();
  t = await startTestBuyer({
    config: { answerLimitBytes: 10_000 },
    payments: counting.payments,
  });
  first = t.network.addSeller({ peerId: 'first', services: [imageService(0.01)] }, () =>
    imageReply(100),
  );
  second = t.network.addSeller({ peerId: 'second', services: [imageService(0.02)] }, () =>
    imageReply(100),
  );
});
afterEach(() => t.stop());

const generate = (headers: Record<string, string> = {}) =>
  fetch(`${t.url}/v1/images/generations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a red fox', n: 1 }),
  });

describe('media answers on the shared send path', () => {
  it('an answer over buyer.answerLimitBytes fails over, and alone is 502 seller_answer_too_large', async () => {
    t.network.setScript(first, () => imageReply(20_000));
    const response = await generate();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(second);
    expect(response.headers.get('x-svc-attempts')).toBe(`${first}@gpt-image-1:too_large_answer`);
    expect(t.buyer.service.health.totalFailures(first)).toBe(1);
    expect(counting.released).toHaveLength(1);
    expect(counting.inFlight()).toBe(0);

    const pinned = await generate({ 'x-svc-pin-peer': first });
    expect(pinned.status).toBe(502);
    const body = (await pinned.json()) as { error: { code: string } };
    expect(body.error.code).toBe('seller_answer_too_large');
    expect(counting.inFlight()).toBe(0);
  });

  it('a body cut midway fails over, penalises the seller and releases its payment', async () => {
    t.network.setScript(first, cutReply);
    const response = await generate();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(second);
    expect(response.headers.get('x-svc-attempts')).toBe(`${first}@gpt-image-1:cut`);
    expect(t.buyer.service.health.totalFailures(first)).toBe(1);
    expect(counting.released).toHaveLength(1);
    expect(counting.completed).toHaveLength(1);
    expect(counting.inFlight()).toBe(0);
  });

  it('a cut body on the only seller is 502 seller_error with nothing left open', async () => {
    t.network.setScript(first, cutReply);
    const response = await generate({ 'x-svc-pin-peer': first });
    expect(response.status).toBe(502);
    const body = (await response.json()) as { error: { code: string } };
    expect(body.error.code).toBe('seller_error');
    expect(counting.inFlight()).toBe(0);
  });

  it('a 5xx before the head fails over and releases', async () => {
    t.network.setScript(first, () => ({
      status: 503,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { message: 'busy', code: 'upstream_error' } }),
    }));
    const response = await generate();
    expect(response.headers.get('x-svc-peer-id')).toBe(second);
    expect(response.headers.get('x-svc-attempts')).toBe(`${first}@gpt-image-1:503`);
    expect(counting.inFlight()).toBe(0);
  });
});

describe('token-priced media use the buyer’s own count for the claim check', () => {
  it('a decision: the claim is compared with the buyer’s count, not with itself', async () => {
    const claim = { inputTokens: 5_000, cachedInputTokens: 0, outputTokens: 1 };
    const decider = t.network.addSeller(
      {
        peerId: 'decider',
        services: [
          {
            id: 'systemone-demo',
            protocols: ['systemone'],
            pricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 1 },
          },
        ],
      },
      () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ object: 'systemone.decision', answer: 'yes' }),
        trailer: { usage: claim },
      }),
    );
    const response = await fetch(`${t.url}/v1/systemone`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'systemone-demo', question: 'Is the sky blue today?' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(decider);
    const completed = counting.completed.at(-1)!;
    expect(completed.claimed).toMatchObject({ usage: claim });
    expect(completed.units).toBeUndefined();
    // "Is the sky blue today?" is a handful of tokens, "yes" one: far below the claim.
    expect(completed.estimatedUsage.inputTokens).toBeGreaterThan(0);
    expect(completed.estimatedUsage.inputTokens).toBeLessThan(20);
    expect(completed.estimatedUsage.outputTokens).toBe(1);
  });

  it('an image service without imageUsd: output bounded by the images the buyer received', async () => {
    const tokenImages = t.network.addSeller(
      { peerId: 'tokenimg', services: [imageService()] },
      () => ({
        ...imageReply(100),
        trailer: { usage: { inputTokens: 9, cachedInputTokens: 0, outputTokens: 99_999 } },
      }),
    );
    const response = await fetch(`${t.url}/v1/images/generations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-pin-peer': tokenImages },
      body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a red fox', size: '1024x1024' }),
    });
    expect(response.status).toBe(200);
    const completed = counting.completed.at(-1)!;
    expect(completed.units).toBeUndefined();
    // One 1024×1024 image: at most 4,161 output tokens (the highest quality), not the claim.
    expect(completed.estimatedUsage.outputTokens).toBe(Math.ceil((1024 * 1024) / 252));
  });
});
