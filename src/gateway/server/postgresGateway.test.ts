import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../testing/index.js';
import { startTestPostgres, type TestPostgres } from '../testing/embeddedPostgres.js';
import { jsonOf, startHarness } from '../testing/harness.js';

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startTestPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

const chat = JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }] });

describe('gateway on PostgreSQL', () => {
  it('serves, and while Postgres restarts fails with 503 leaving nothing half-written', async () => {
    const databaseUrl = await pg.createDatabase('restart');
    const h = await startHarness({ databaseUrl, buyer: { costUsd: '0.000200' } });
    try {
      const { key, secret } = await h.key({ limits: { daily: 1_000_000n } });
      expect(
        (await h.call('/v1/chat/completions', { secret, method: 'POST', body: chat })).status,
      ).toBe(200);
      await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 1);
      await pg.pause();
      const down = await h.call('/v1/chat/completions', { secret, method: 'POST', body: chat });
      expect(down.status).toBe(503);
      expect((await jsonOf(down)).error.code).toBe('store_unavailable');
      expect(h.buyer.received.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
      await pg.resume();
      const back = await waitFor(async () => {
        const response = await h.call('/v1/chat/completions', {
          secret,
          method: 'POST',
          body: chat,
        });
        return response.status === 200 && response;
      }, 15_000);
      expect(back.status).toBe(200);
      await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 2);
      expect((await h.store.periodSpend('key', key.id, Date.now())).daily).toBe(400n);
      expect(await h.store.ledgerTotal(key.id)).toBe(400n);
      const view = await jsonOf(await h.call('/v1/key', { secret }));
      expect(view.data.limits.daily).toEqual({
        limit_usd: '1.000000',
        spent_usd: '0.000400',
        remaining_usd: '0.999600',
      });
    } finally {
      await h.stop();
    }
  }, 60_000);
});
