/**
 * The buyer under a gateway's cost cap (`x-svc-max-cost-usd`;
 * docs/decisions/170-max-tokens-under-a-cost-cap.md): it never lowers the client's max tokens,
 * asks for 4,096 when the client set none, and fails over only to offers whose price fits that in
 * the cap (docs/decisions/169-reservations-priced-at-the-route.md); when none fits, 402
 * `spend_limit_reached` says how many output tokens would fit.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ErrorBody, readJson } from './testing/readJson.js';
import { chatCompletion, openAiError } from './testing/sellerReplies.js';
import { scoreAll, startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const SECRET = 'cd'.repeat(32);

/** A buyer with a cheap seller (1/100 USD per M) and a dear one (1/200), both of gpt-4o. */
async function twoSellers(cheapFails = false, config: Record<string, unknown> = {}) {
  t = await startTestBuyer({ reputation: scoreAll(80), payments: 'unpaid-dev', config });
  mkdirSync(join(t.dataDir, 'gateway'), { recursive: true });
  writeFileSync(join(t.dataDir, 'gateway', 'control.secret'), SECRET, { mode: 0o600 });
  const cheap = t.network.addSeller(
    {
      peerId: 'cheap',
      services: [{ id: 'gpt-4o', pricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 100 } }],
    },
    (c) => (cheapFails ? openAiError(500, 'down') : chatCompletion(c, 'from cheap')),
  );
  const dear = t.network.addSeller(
    {
      peerId: 'dear',
      services: [{ id: 'gpt-4o', pricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 200 } }],
    },
    (c) => chatCompletion(c, 'from dear'),
  );
  return { cheap, dear };
}

function post(body: Record<string, unknown>, maxCostUsd: string, requestId?: string) {
  return fetch(`${t!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-svc-gateway-auth': SECRET,
      'x-svc-max-cost-usd': maxCostUsd,
      ...(requestId ? { 'x-svc-request-id': requestId } : {}),
    },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

describe('max tokens under a cost cap', () => {
  it("sends the client's max tokens unchanged, and 4,096 when it set none", async () => {
    const { cheap } = await twoSellers();
    const first = await post({ max_tokens: 50 }, '1.000000', 'req_from_gateway');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-svc-request-id')).toBe('req_from_gateway');
    expect(t!.network.callsTo(cheap).at(-1)!.json.max_tokens).toBe(50);
    expect((await post({}, '1.000000')).status).toBe(200);
    expect(t!.network.callsTo(cheap).at(-1)!.json.max_tokens).toBe(4096);
  });

  it('never lowers them: 402 saying how many fit, nothing sent', async () => {
    const { cheap, dear } = await twoSellers();
    // 0.001 USD at 100 USD/M output: 9 output tokens after the input.
    for (const body of [{ max_tokens: 100_000 }, {}]) {
      const response = await post(body, '0.001000');
      expect(response.status).toBe(402);
      const { error } = await readJson<ErrorBody>(response);
      expect(error.code).toBe('spend_limit_reached');
      const fit = (error as unknown as { max_tokens_that_fit: number }).max_tokens_that_fit;
      expect(fit).toBeGreaterThan(0);
      expect(fit).toBeLessThanOrEqual(10);
      expect(error.message).toContain(`can only afford ${fit}`);
      expect(error.message).toContain(`Set max_tokens to ${fit} or less`);
    }
    expect(t!.network.callsTo(cheap)).toHaveLength(0);
    expect(t!.network.callsTo(dear)).toHaveLength(0);
  });

  it('fails over only to offers that fit the cap', async () => {
    const { cheap, dear } = await twoSellers(true);
    // 5 output tokens cost about 0.000510 USD at the cheap seller, 0.001010 at the dear one.
    const response = await post({ max_tokens: 5 }, '0.000700');
    expect(t!.network.callsTo(cheap)).toHaveLength(1);
    expect(t!.network.callsTo(dear)).toHaveLength(0);
    // The cheap seller's failure, as the client would get it without a cap.
    expect(response.status).toBe(500);
    expect(response.headers.get('x-svc-attempts')).toBe(`${cheap}@gpt-4o:500`);
    // With room for the dear seller too, it answers after the cheap one failed.
    const roomy = await post({ max_tokens: 5 }, '0.001200');
    expect(roomy.status).toBe(200);
    expect(roomy.headers.get('x-svc-peer-id')).toBe(dear);
    expect(t!.network.callsTo(dear).at(-1)!.json.max_tokens).toBe(5);
  });

  it('marks in GET /v1/models the offers its own preferences admit (what a gateway prices)', async () => {
    const { cheap, dear } = await twoSellers(false, {
      routingPreferences: { maxPricing: { outputUsdPerMillion: 150 } },
    });
    const list = (await (await fetch(`${t!.url}/v1/models`)).json()) as {
      data: Array<{ id: string; peers: Array<{ peerId: string; eligible: boolean }> }>;
    };
    const peers = list.data.find((entry) => entry.id === 'gpt-4o')!.peers;
    expect(peers.map((peer) => [peer.peerId, peer.eligible])).toEqual([
      [cheap, true],
      [dear, false],
    ]);
  });
});
