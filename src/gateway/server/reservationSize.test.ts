/**
 * Far from every limit a request's reservation is sized by a bound that counts no tokens; near a
 * limit it is counted, so what is admitted and the refusal's details are those of the counted size
 * (docs/decisions/159-gateway-auth-and-sizing-without-counting.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd, toPriceMicro } from '../../money/index.js';
import { waitFor } from '../../testing/index.js';
import { requestMaxCost, requestMaxCostBound } from '../budget/requestMaxCost.js';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';
import { KEEP_ROOM_REQUESTS } from './reserveRequest.js';

const PRICES = { inputUsdPerMillion: 1, outputUsdPerMillion: 2 };
const body = {
  model: 'model-a',
  messages: [
    { role: 'user', content: 'Please summarise the following paragraph in one line. '.repeat(40) },
  ],
  max_tokens: 50,
};
const COUNTED = requestMaxCost('/v1/chat/completions', body, toPriceMicro(PRICES))!;
const BOUND = requestMaxCostBound('/v1/chat/completions', body, toPriceMicro(PRICES))!;

let h: Harness;
// The stub charges $1 capped at x-svc-max-cost-usd: a served request costs its reservation.
beforeAll(async () => {
  h = await startHarness({ buyer: { costUsd: '1.000000', prices: PRICES } });
});
afterAll(() => h.stop());

const post = (secret: string) =>
  h.call('/v1/chat/completions', { secret, method: 'POST', body: JSON.stringify(body) });
const capOf = (response: Response) =>
  h.buyer.received.find(
    (r) => r.headers['x-svc-request-id'] === response.headers.get('x-svc-request-id'),
  )?.headers['x-svc-max-cost-usd'];

describe('reservation sizing near and far from a limit', () => {
  it('the bound is larger than the counted size here (else this suite proves nothing)', () => {
    expect(BOUND).toBeGreaterThan(COUNTED);
  });

  it('far from the limit reserves the bound, and the cap is the bound', async () => {
    const limit = BOUND * (KEEP_ROOM_REQUESTS + 2n);
    const { key, secret } = await h.key({ limits: { total: limit } });
    const response = await post(secret);
    expect(response.status).toBe(200);
    expect(capOf(response)).toBe(formatUsd(BOUND));
    await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 1);
    expect(await h.store.ledgerTotal(key.id)).toBe(BOUND);
  });

  it('a request that fits exactly at its counted size is served, then refused as before', async () => {
    const { key, secret } = await h.key({ limits: { total: COUNTED } });
    const served = await post(secret);
    expect(served.status).toBe(200);
    expect(capOf(served)).toBe(formatUsd(COUNTED));
    await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 1);
    const refused = await post(secret);
    expect(refused.status).toBe(402);
    expect((await jsonOf(refused)).error).toMatchObject({
      code: 'spend_limit_reached',
      level: 'key',
      period: 'total',
      limit_usd: formatUsd(COUNTED),
      spent_usd: formatUsd(COUNTED),
      remaining_usd: '0.000000',
      resets_at: null,
    });
    expect(await h.store.ledgerTotal(key.id)).toBe(COUNTED);
  });

  it('one micro-USD short of the counted size: served with fewer max tokens, or refused without', async () => {
    const short = await h.key({ limits: { daily: COUNTED - 1n } });
    const served = await post(short.secret);
    expect(served.status).toBe(200);
    expect(capOf(served)).toBe(formatUsd(COUNTED - 1n));
    const sent = h.buyer.received.find(
      (r) => r.headers['x-svc-request-id'] === served.headers.get('x-svc-request-id'),
    )!;
    expect(JSON.parse(sent.body).max_tokens).toBe(body.max_tokens - 1);
    // Without max_tokens nothing is lowered: the 4,096 default fits nowhere near, refused.
    const unlimited = { ...body } as Record<string, unknown>;
    delete unlimited.max_tokens;
    const atDefault = requestMaxCost('/v1/chat/completions', unlimited, toPriceMicro(PRICES))!;
    const { key, secret } = await h.key({ limits: { daily: atDefault - 1n } });
    const refused = await h.call('/v1/chat/completions', {
      secret,
      method: 'POST',
      body: JSON.stringify(unlimited),
    });
    expect(refused.status).toBe(402);
    expect((await jsonOf(refused)).error).toMatchObject({
      code: 'spend_limit_reached',
      level: 'key',
      period: 'daily',
      limit_usd: formatUsd(atDefault - 1n),
      spent_usd: '0.000000',
      remaining_usd: formatUsd(atDefault - 1n),
      max_tokens_that_fit: 4095,
    });
    expect(await h.store.ledgerTotal(key.id)).toBe(0n);
    expect(await h.store.listReservations(Date.now() + 1)).toEqual([]);
  });

  it('within the kept room of a workspace limit, requests are sized as counted', async () => {
    const ws = await h.store.createWorkspace({
      id: 'ws_near',
      name: 'near',
      identity: 'near',
      createdAt: Date.now(),
    });
    // Room for the bound several times over, but not for the room a bound must leave.
    await h.store.setWorkspaceLimits(ws.id, { monthly: BOUND * 4n });
    const { key, secret } = await h.key({ workspace: 'near' });
    for (let served = 1; served <= 2; served += 1) {
      const response = await post(secret);
      expect(response.status).toBe(200);
      expect(capOf(response)).toBe(formatUsd(COUNTED));
      await waitFor(async () => (await h.store.keyUsage(key.id)).requests === served);
    }
    expect(await h.store.ledgerTotal(key.id)).toBe(COUNTED * 2n);
  });
});
