/**
 * Reservations priced at the offers a request may use
 * (docs/decisions/169-reservations-priced-at-the-route.md): the route the buyer takes (the first
 * offer its catalog ranks, among those its own preferences and the key's policy admit, or the
 * pinned one), not the dearest offer of the model. A small budget is then usable to its end; when
 * nothing fits, the 402 says how many output tokens would
 * (docs/decisions/170-max-tokens-under-a-cost-cap.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUsd, toPriceMicro } from '../../money/index.js';
import { requestMaxCost } from '../budget/requestMaxCost.js';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';
import { STUB_PEER_ID } from '../testing/stubBuyer.js';

const CHEAP = { inputUsdPerMillion: 0.1, outputUsdPerMillion: 0.4 };
const DEAR = { inputUsdPerMillion: 0.2, outputUsdPerMillion: 0.8 };
const DEAR_PEER = 'cd'.repeat(20);
const PATH = '/v1/chat/completions';
const body = (maxTokens?: number) => ({
  model: 'model-a',
  messages: [{ role: 'user', content: 'What does this cost?' }],
  ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
});
const costAt = (prices: typeof CHEAP, maxTokens?: number) =>
  requestMaxCost(PATH, body(maxTokens), toPriceMicro(prices))!;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    buyer: {
      costUsd: '0.000022',
      offers: [
        { peerId: STUB_PEER_ID, prices: CHEAP, reputationScore: 70 },
        { peerId: DEAR_PEER, prices: DEAR, reputationScore: 95 },
      ],
    },
  });
});
afterAll(() => h.stop());

const chat = (secret: string, payload: Record<string, unknown>, headers = {}) =>
  h.call(PATH, { secret, method: 'POST', headers, body: JSON.stringify(payload) });
/** The cost cap the gateway sent with the last request the buyer received. */
const lastCap = () => {
  const sent = h.buyer.received.filter((r) => r.path === PATH).at(-1)!;
  return parseUsd(String(sent.headers['x-svc-max-cost-usd']));
};

describe('reservations priced at the route', () => {
  it('uses a small budget to its end, one request at a time', async () => {
    const limit = 80n;
    const { key, secret } = await h.key({ limits: { total: limit } });
    const sentMaxTokens: number[] = [];
    let refusal: { message: string; max_tokens_that_fit?: number } | undefined;
    for (let i = 0; i < 20 && !refusal; i++) {
      const response = await chat(secret, body(64));
      if (response.status !== 200) {
        expect(response.status).toBe(402);
        refusal = (await jsonOf(response)).error;
        break;
      }
      await response.arrayBuffer();
      const sent = h.buyer.received.filter((r) => r.path === PATH).at(-1)!;
      sentMaxTokens.push(JSON.parse(sent.body).max_tokens);
    }
    const spent = (await h.store.periodSpend('key', key.id, Date.now())).total;
    // Whole requests at the route's price while they fit, then the last room with fewer tokens.
    expect(sentMaxTokens.slice(0, 3)).toEqual([64, 64, 64]);
    expect(sentMaxTokens.length).toBeGreaterThan(3);
    expect(sentMaxTokens.at(-1)).toBeLessThan(64);
    // At least the limit minus one request's actual cost, never more than the limit.
    expect(spent).toBeGreaterThanOrEqual(limit - 22n);
    expect(spent).toBeLessThanOrEqual(limit);
    expect(refusal?.max_tokens_that_fit).toBe(0);
    expect(refusal?.message).toContain('no room even for this request');
  });

  it('serves at least room ÷ (the route reservation) of 200 at once, never overspending', async () => {
    const room = 400n;
    h.buyer.options.costUsd = '1.000000'; // capped by the buyer at the reservation
    try {
      const { key, secret } = await h.key({ limits: { total: room } });
      const statuses = await Promise.all(
        Array.from({ length: 200 }, async () => {
          const response = await chat(secret, body(64));
          await response.arrayBuffer();
          return response.status;
        }),
      );
      const served = statuses.filter((status) => status === 200).length;
      expect(served).toBeGreaterThanOrEqual(Number(room / costAt(CHEAP, 64)));
      expect(statuses.filter((status) => status !== 200).every((s) => s === 402)).toBe(true);
      expect((await h.store.periodSpend('key', key.id, Date.now())).total).toBeLessThanOrEqual(
        room,
      );
    } finally {
      h.buyer.options.costUsd = '0.000022';
    }
  });

  it("prices only offers the buyer's preferences, the key's policy and a pin admit", async () => {
    // Near a limit (room for far fewer than 256 bounded reservations) requests are sized exactly.
    const blocked = await h.key({ limits: { total: 1_000n } });
    await h.store.setKeyPolicy(blocked.key.id, { blockedPeerIds: [STUB_PEER_ID] });
    expect((await chat(blocked.secret, body(64))).status).toBe(200);
    expect(lastCap()).toBe(costAt(DEAR, 64));

    const trusting = await h.key({ limits: { total: 1_000n } });
    await h.store.setKeyPolicy(trusting.key.id, { minTrustScore: 90 });
    expect((await chat(trusting.secret, body(64))).status).toBe(200);
    expect(lastCap()).toBe(costAt(DEAR, 64));

    const plain = await h.key({ limits: { total: 1_000n } });
    expect((await chat(plain.secret, body(64), { 'x-svc-pin-peer': DEAR_PEER })).status).toBe(200);
    expect(lastCap()).toBe(costAt(DEAR, 64));
    expect((await chat(plain.secret, { ...body(64), model: `${DEAR_PEER}@model-a` })).status).toBe(
      200,
    );
    expect(lastCap()).toBe(costAt(DEAR, 64));
    expect((await chat(plain.secret, body(64))).status).toBe(200);
    expect(lastCap()).toBe(costAt(CHEAP, 64));
  });

  it('refuses a request without max_tokens saying how many output tokens fit, and that many do', async () => {
    const limit = costAt(CHEAP, 4096) / 2n;
    const { secret } = await h.key({ limits: { total: limit } });
    const refused = await chat(secret, body());
    expect(refused.status).toBe(402);
    const { error } = await jsonOf(refused);
    expect(error.code).toBe('spend_limit_reached');
    const fit = error.max_tokens_that_fit as number;
    expect(fit).toBeGreaterThan(64);
    expect(fit).toBeLessThan(4096);
    expect(error.message).toContain('up to 4096 output tokens');
    expect(error.message).toContain(`can only afford ${fit}`);
    expect((await chat(secret, body(fit))).status).toBe(200);
    const sent = h.buyer.received.filter((r) => r.path === PATH).at(-1)!;
    expect(JSON.parse(sent.body).max_tokens).toBe(fit);
  });
});

describe("offers the buyer's own preferences exclude", () => {
  let g: Harness;
  beforeAll(async () => {
    g = await startHarness({
      buyer: {
        costUsd: '0.000022',
        offers: [
          { peerId: STUB_PEER_ID, prices: CHEAP, eligible: false },
          { peerId: DEAR_PEER, prices: DEAR },
        ],
      },
    });
  });
  afterAll(() => g.stop());

  it('are never the price of a reservation', async () => {
    const { secret } = await g.key({ limits: { total: 1_000n } });
    const response = await g.call(PATH, { secret, method: 'POST', body: JSON.stringify(body(64)) });
    expect(response.status).toBe(200);
    const sent = g.buyer.received.filter((r) => r.path === PATH).at(-1)!;
    expect(parseUsd(String(sent.headers['x-svc-max-cost-usd']))).toBe(costAt(DEAR, 64));
  });
});
