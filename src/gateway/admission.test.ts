/**
 * Admission with reservations sized to the request: on a budget with room for exactly N requests
 * at their maximum cost and a little more, exactly N of 200 concurrent requests are served in full
 * and one more with the max tokens the rest pays for (docs/decisions/170-max-tokens-under-a-cost-cap.md)
 * — on one gateway, and on two gateway processes sharing one SQLite file or one PostgreSQL database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toPriceMicro } from '../money/index.js';
import { waitFor } from '../testing/index.js';
import { requestMaxCost } from './budget/requestMaxCost.js';
import { startTestPostgres, type TestPostgres } from './testing/embeddedPostgres.js';
import { startGatewayProcess } from './testing/gatewayProcess.js';
import { type Harness, startHarness } from './testing/harness.js';

const PRICES = { inputUsdPerMillion: 1, outputUsdPerMillion: 2 };
const ROOM = 13;
const body = (stream: boolean) => ({
  model: 'model-a',
  messages: [{ role: 'user', content: 'How much can this cost?' }],
  max_tokens: 100,
  stream,
});
const COST = requestMaxCost('/v1/chat/completions', body(false), toPriceMicro(PRICES))!;
// Room for ROOM requests, not one more.
const LIMIT = COST * BigInt(ROOM) + COST - 1n;

async function fire(urls: string[], secret: string, count: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const response = await fetch(`${urls[index % urls.length]}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(body(index % 2 === 0)),
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
}

async function admitsExactlyRoom(h: Harness, urls: string[]): Promise<void> {
  const { key, secret } = await h.key({ limits: { total: LIMIT } });
  const statuses = await fire(urls, secret, 200);
  expect(statuses.filter((s) => s === 200)).toHaveLength(ROOM + 1);
  expect(statuses.filter((s) => s === 402)).toHaveLength(200 - ROOM - 1);
  await waitFor(async () => (await h.store.keyUsage(key.id)).requests === ROOM + 1);
  const caps = h.buyer.received
    .filter((r) => r.headers.authorization === undefined && r.path === '/v1/chat/completions')
    .slice(-(ROOM + 1))
    .map((r) => JSON.parse(r.body).max_tokens as number);
  expect(caps.filter((tokens) => tokens === 100)).toHaveLength(ROOM);
  expect(caps.filter((tokens) => tokens < 100)).toHaveLength(1);
  const counter = (await h.store.periodSpend('key', key.id, Date.now())).total;
  expect(counter).toBe(LIMIT);
  expect(counter).toBeLessThanOrEqual(LIMIT);
  expect(await h.store.ledgerTotal(key.id)).toBe(counter);
  expect(await h.store.listReservations(Date.now() + 1)).toEqual([]);
}

// The stub charges $1 capped at x-svc-max-cost-usd: every served request costs its reservation.
const buyer = { costUsd: '1.000000', prices: PRICES };

describe('admission with reservations sized to the request', () => {
  it('reserves the request maximum from the catalog price, not the configured $1', () => {
    expect(COST).toBeGreaterThan(0n);
    expect(COST).toBeLessThan(1_000n);
    expect(requestMaxCost('/v1/chat/completions', body(true), toPriceMicro(PRICES))).toBe(COST);
  });

  it('SQLite, one gateway: exactly N of 200 concurrent requests', async () => {
    const h = await startHarness({ buyer });
    try {
      await admitsExactlyRoom(h, [h.gateway.url]);
    } finally {
      await h.stop();
    }
  });

  it('SQLite file shared by two gateway processes: exactly N of 200', async () => {
    const h = await startHarness({ buyer });
    const second = await startGatewayProcess({ dataDir: h.dataDir, buyerUrl: h.buyer.url });
    try {
      await admitsExactlyRoom(h, [h.gateway.url, second.url]);
    } finally {
      await second.stop();
      await h.stop();
    }
  });

  describe('PostgreSQL', () => {
    let pg: TestPostgres;
    beforeAll(async () => {
      pg = await startTestPostgres();
    });
    afterAll(async () => {
      await pg?.stop();
    });

    it('two gateway processes and one in-process gateway: exactly N of 200', async () => {
      const databaseUrl = await pg.createDatabase('admission');
      const h = await startHarness({ databaseUrl, buyer });
      const others = await Promise.all(
        [0, 1].map(() =>
          startGatewayProcess({ dataDir: h.dataDir, buyerUrl: h.buyer.url, databaseUrl }),
        ),
      );
      try {
        await admitsExactlyRoom(h, [h.gateway.url, ...others.map((o) => o.url)]);
      } finally {
        for (const other of others) await other.stop();
        await h.stop();
      }
      // Two gateway processes start (each loads the whole gateway): ~20 s alone, more on a busy machine.
    }, 90_000);
  });
});
