/**
 * The gateway's guarantee: no limit is ever exceeded, by any concurrency, on one gateway or
 * several sharing a database. Room for exactly N requests -> exactly N succeed, spend <= limit,
 * the counter equals the ledger.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../testing/index.js';
import { startTestPostgres, type TestPostgres } from './testing/embeddedPostgres.js';
import { startGatewayProcess } from './testing/gatewayProcess.js';
import { type Harness, startHarness } from './testing/harness.js';

const COST_USD = '0.000100';
const ROOM = 10;
const LIMIT_MICRO = 100n * BigInt(ROOM);

async function fire(urls: string[], secret: string, count: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const response = await fetch(`${urls[index % urls.length]}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'model-a', messages: [], stream: index % 2 === 0 }),
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
}

async function assertGuarantee(h: Harness, keyId: string, statuses: number[]): Promise<void> {
  expect(statuses.filter((s) => s === 200)).toHaveLength(ROOM);
  expect(statuses.filter((s) => s === 402)).toHaveLength(statuses.length - ROOM);
  await waitFor(async () => (await h.store.keyUsage(keyId)).requests === ROOM);
  const counter = (await h.store.periodSpend('key', keyId, Date.now())).total;
  expect(counter).toBeLessThanOrEqual(LIMIT_MICRO);
  expect(counter).toBe(LIMIT_MICRO);
  expect(await h.store.ledgerTotal(keyId)).toBe(counter);
}

describe('concurrency guarantee', () => {
  it('SQLite: 80 concurrent requests on room for 10 -> exactly 10 succeed', async () => {
    const h = await startHarness({
      buyer: { costUsd: COST_USD },
      gateway: { maxRequestCostUsd: COST_USD },
    });
    try {
      const { key, secret } = await h.key({ limits: { total: LIMIT_MICRO } });
      await assertGuarantee(h, key.id, await fire([h.gateway.url], secret, 80));
    } finally {
      await h.stop();
    }
  });

  describe('PostgreSQL with two gateway processes', () => {
    let pg: TestPostgres;
    beforeAll(async () => {
      pg = await startTestPostgres();
    });
    afterAll(async () => {
      await pg?.stop();
    });

    it('80 concurrent requests split over two gateways on room for 10 -> exactly 10 succeed', async () => {
      const databaseUrl = await pg.createDatabase('concurrency');
      const h = await startHarness({
        databaseUrl,
        buyer: { costUsd: COST_USD },
        gateway: { maxRequestCostUsd: COST_USD },
      });
      writeFileSync(
        join(h.dataDir, 'config.json'),
        JSON.stringify({ gateway: { maxRequestCostUsd: COST_USD } }),
      );
      const second = await startGatewayProcess({
        dataDir: h.dataDir,
        buyerUrl: h.buyer.url,
        databaseUrl,
      });
      try {
        const { key, secret } = await h.key({ limits: { total: LIMIT_MICRO } });
        await assertGuarantee(h, key.id, await fire([h.gateway.url, second.url], secret, 80));
        // The second process reads the same counters: its GET /v1/key sees all settled spend.
        const view = await fetch(`${second.url}/v1/key`, {
          headers: { authorization: `Bearer ${secret}` },
        });
        const data = (await view.json()) as {
          data: { usage: { requests: number; spent_usd: string } };
        };
        expect(data.data.usage).toMatchObject({ requests: ROOM, spent_usd: '0.001000' });
      } finally {
        await second.stop();
        await h.stop();
      }
    });

    it('a workspace budget shared by two keys holds across two gateways (no deadlocks)', async () => {
      const databaseUrl = await pg.createDatabase('shared_workspace');
      const h = await startHarness({
        databaseUrl,
        buyer: { costUsd: COST_USD },
        gateway: { maxRequestCostUsd: COST_USD },
      });
      writeFileSync(
        join(h.dataDir, 'config.json'),
        JSON.stringify({ gateway: { maxRequestCostUsd: COST_USD } }),
      );
      const second = await startGatewayProcess({
        dataDir: h.dataDir,
        buyerUrl: h.buyer.url,
        databaseUrl,
      });
      try {
        const a = await h.key();
        const b = await h.key();
        await h.store.setWorkspaceLimits(a.key.workspaceId, { total: LIMIT_MICRO });
        const urls = [h.gateway.url, second.url];
        const statuses = (
          await Promise.all([fire(urls, a.secret, 40), fire(urls.toReversed(), b.secret, 40)])
        ).flat();
        expect(statuses.filter((s) => s === 200)).toHaveLength(ROOM);
        expect(statuses.filter((s) => s === 402)).toHaveLength(80 - ROOM);
        await waitFor(
          async () =>
            (await h.store.keyUsage(a.key.id)).requests +
              (await h.store.keyUsage(b.key.id)).requests ===
            ROOM,
        );
        const counter = (await h.store.periodSpend('workspace', a.key.workspaceId, Date.now()))
          .daily;
        expect(counter).toBe(LIMIT_MICRO);
        expect((await h.store.ledgerTotal(a.key.id)) + (await h.store.ledgerTotal(b.key.id))).toBe(
          counter,
        );
      } finally {
        await second.stop();
        await h.stop();
      }
    });
  });
});
