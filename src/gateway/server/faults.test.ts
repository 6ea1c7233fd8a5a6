import { request } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../testing/index.js';
import { jsonOf, startHarness } from '../testing/harness.js';
import { STUB_PEER_ID } from '../testing/stubBuyer.js';

const chat = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('faults', () => {
  it('buyer down: 502 buyer_unavailable in the client format, reservation released', async () => {
    const h = await startHarness();
    try {
      const { key, secret } = await h.key({ limits: { total: 1_000_000n } });
      await h.buyer.stop();
      const openai = await h.call('/v1/chat/completions', { secret, method: 'POST', body: chat() });
      expect(openai.status).toBe(502);
      expect((await jsonOf(openai)).error).toMatchObject({
        code: 'buyer_unavailable',
        type: 'api_error',
      });
      const anthropic = await h.call('/v1/messages', {
        secret,
        method: 'POST',
        body: chat({ max_tokens: 5 }),
      });
      expect(await jsonOf(anthropic)).toMatchObject({
        type: 'error',
        error: { code: 'buyer_unavailable', type: 'api_error' },
      });
      const again = await h.store.reserve({
        reservationId: 'probe',
        keyId: key.id,
        maxAmountMicro: 1_000_000n,
        now: Date.now(),
      });
      expect(again).toMatchObject({ ok: true, reservation: { amountMicro: 1_000_000n } });
      expect(await h.store.keyUsage(key.id)).toMatchObject({ requests: 0 });
    } finally {
      await h.stop();
    }
  });

  it('a buyer error passes through; a request the buyer never routed costs nothing', async () => {
    const h = await startHarness({ buyer: { errorStatus: 502 } });
    try {
      const { key, secret } = await h.key({ limits: { total: 1_000_000n } });
      const response = await h.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: chat(),
      });
      expect(response.status).toBe(502);
      expect((await jsonOf(response)).error.code).toBe('model_not_found');
      await waitFor(async () => (await h.store.listReservations(Date.now() + 1)).length === 0);
      expect(await h.store.ledgerTotal(key.id)).toBe(0n);
      const rows = await waitFor(async () => {
        const all = await h.store.queryLogs({ keyId: key.id });
        return all.length === 1 && all;
      });
      expect(rows[0]).toMatchObject({ status: 502, costMicro: 0n, errorCode: 'model_not_found' });
    } finally {
      await h.stop();
    }
  });

  it('a client leaving mid-stream is charged for the delivered part and logged', async () => {
    const h = await startHarness({
      buyer: { costUsd: '0.001000', streamChunks: 10, chunkDelayMs: 30 },
    });
    try {
      const { key, secret } = await h.key({ limits: { daily: 1_000_000n } });
      const url = new URL(`${h.gateway.url}/v1/chat/completions`);
      await new Promise<void>((resolve, reject) => {
        const req = request(
          url,
          {
            method: 'POST',
            headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          },
          (res) => {
            let seen = 0;
            res.on('data', () => {
              seen++;
              if (seen === 2) {
                req.destroy();
                resolve();
              }
            });
            res.on('error', () => {});
          },
        );
        req.on('error', () => {});
        req.on('close', () => resolve());
        req.end(chat({ stream: true }));
        setTimeout(() => reject(new Error('no data')), 5000).unref();
      });
      const rows = await waitFor(async () => {
        const all = await h.store.queryLogs({ keyId: key.id });
        return all.length === 1 && all;
      });
      expect(rows[0]).toMatchObject({
        status: 499,
        errorCode: 'request_cancelled',
        streamed: true,
      });
      const charged = rows[0]!.costMicro;
      expect(charged).toBeGreaterThan(0n);
      expect(charged).toBeLessThan(1000n);
      expect(await h.store.ledgerTotal(key.id)).toBe(charged);
    } finally {
      await h.stop();
    }
  });

  it('a buyer dying mid-stream closes the client connection and charges the delivered part', async () => {
    const h = await startHarness({
      buyer: { costUsd: '0.001000', streamChunks: 10, cutStreamAfter: 3 },
    });
    try {
      const { key, secret } = await h.key({ limits: { daily: 1_000_000n } });
      const response = await h.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: chat({ stream: true }),
      });
      expect(response.status).toBe(200);
      await expect(response.text()).rejects.toThrow();
      const rows = await waitFor(async () => {
        const all = await h.store.queryLogs({ keyId: key.id });
        return all.length === 1 && all;
      });
      expect(rows[0]).toMatchObject({
        status: 502,
        errorCode: 'buyer_unavailable',
        streamed: true,
        costMicro: 300n,
      });
      expect(await h.store.ledgerTotal(key.id)).toBe(300n);
    } finally {
      await h.stop();
    }
  });

  it('settles from GET /_svc/requests/<id> when the buyer sends no cost header', async () => {
    const h = await startHarness({ buyer: { costUsd: '0.000700', omitCost: true } });
    try {
      const { key, secret } = await h.key({ limits: { total: 1_000_000n } });
      expect(
        (await h.call('/v1/chat/completions', { secret, method: 'POST', body: chat() })).status,
      ).toBe(200);
      expect(
        (
          await h.call('/v1/chat/completions', {
            secret,
            method: 'POST',
            body: chat({ stream: true }),
          })
        ).status,
      ).toBe(200);
      await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 2);
      expect(await h.store.ledgerTotal(key.id)).toBe(1400n);
    } finally {
      await h.stop();
    }
  });

  it('fails closed with 503 spend_tracking_unavailable when spend cannot be determined', async () => {
    const h = await startHarness({
      buyer: { costUsd: '0.000700', omitCost: true, lookupDown: true },
      gateway: { maxRequestCostUsd: '0.01' },
    });
    try {
      const { key, secret } = await h.key({ limits: { total: 1_000_000n } });
      const response = await h.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: chat(),
      });
      expect(response.status).toBe(503);
      expect((await jsonOf(response)).error.code).toBe('spend_tracking_unavailable');
      // The unknown cost stays reserved (counted against the budgets) until recovery asks the
      // buyer's journal: nothing is charged yet, nothing is under-counted.
      expect(await h.store.ledgerTotal(key.id)).toBe(0n);
      const held = await h.store.listReservations(Date.now() + 1);
      expect(held.map((r) => [r.keyId, r.amountMicro])).toEqual([[key.id, 10_000n]]);
    } finally {
      await h.stop();
    }
  });

  it('database locked by another process: 503, nothing forwarded, nothing half-written', async () => {
    const h = await startHarness({ sqliteBusyTimeoutMs: 50 });
    const other = new DatabaseSync(join(h.dataDir, 'gateway', 'gateway.db'), { timeout: 0 });
    try {
      const { key, secret } = await h.key({ limits: { total: 1_000_000n } });
      other.exec('BEGIN IMMEDIATE');
      const response = await h.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: chat(),
      });
      expect(response.status).toBe(503);
      expect((await jsonOf(response)).error.code).toBe('store_unavailable');
      other.exec('ROLLBACK');
      expect(h.buyer.received.filter((r) => r.path !== '/v1/models')).toHaveLength(0);
      expect(await h.store.keyUsage(key.id)).toMatchObject({ requests: 0 });
      const again = await h.store.reserve({
        reservationId: 'probe',
        keyId: key.id,
        maxAmountMicro: 1_000_000n,
        now: Date.now(),
      });
      expect(again).toMatchObject({ ok: true, reservation: { amountMicro: 1_000_000n } });
    } finally {
      other.close();
      await h.stop();
    }
  });

  it('store down: 503 store_unavailable, nothing forwarded', async () => {
    const h = await startHarness();
    try {
      const { secret } = await h.key();
      await h.store.close();
      const response = await h.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: chat(),
      });
      expect(response.status).toBe(503);
      expect((await jsonOf(response)).error.code).toBe('store_unavailable');
      expect(h.buyer.received.filter((r) => r.path !== '/v1/models')).toHaveLength(0);
    } finally {
      await h.gateway.stop();
      await h.buyer.stop();
    }
  });
});

describe('routing policies through the gateway', () => {
  it('sends the merged policy to the buyer and refuses pinned sellers outside it', async () => {
    const h = await startHarness();
    try {
      const other = 'cd'.repeat(20);
      const { key, secret } = await h.key();
      const ws = (await h.store.getWorkspace(key.workspaceId))!;
      await h.store.setWorkspacePolicy(ws.id, {
        minTrustScore: 70,
        blockedPeerIds: [other],
        maxPricing: { outputUsdPerMillion: 10 },
      });
      await h.store.setKeyPolicy(key.id, {
        minTrustScore: 50,
        maxPricing: { outputUsdPerMillion: 4 },
        sort: 'free-first',
      });
      const ok = await h.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: chat({ model: `${STUB_PEER_ID}@model-a` }),
      });
      expect(ok.status).toBe(200);
      const header = h.buyer.received.at(-1)!.headers['x-svc-routing-policy'] as string;
      expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({
        minTrustScore: 70,
        maxPricing: { outputUsdPerMillion: 4 },
        blockedPeerIds: [other],
        preferFreeSellers: true,
      });
      const pinned = await h.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: chat({ model: `0x${other}@model-a` }),
      });
      expect(pinned.status).toBe(403);
      expect((await jsonOf(pinned)).error.code).toBe('model_not_allowed');
    } finally {
      await h.stop();
    }
  });

  it('resolves @preset/<name>: workspace preset first, its model and policy applied', async () => {
    const h = await startHarness();
    try {
      const { key, secret } = await h.key();
      await h.store.upsertPreset({
        name: 'cheap',
        owner: '',
        model: 'model-b',
        policy: { minTrustScore: 65 },
        createdAt: 0,
      });
      await h.store.upsertPreset({
        name: 'cheap',
        owner: key.workspaceId,
        model: 'model-a',
        policy: { minTrustScore: 90, allowedModels: ['model-a'] },
        createdAt: 0,
      });
      const response = await h.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: chat({ model: '@preset/cheap' }),
      });
      expect(response.status).toBe(200);
      const last = h.buyer.received.at(-1)!;
      expect(JSON.parse(last.body).model).toBe('model-a');
      const policy = JSON.parse(
        Buffer.from(last.headers['x-svc-routing-policy'] as string, 'base64url').toString(),
      );
      expect(policy).toEqual({ minTrustScore: 90, allowedModels: ['model-a'] });
      const limited = await h.key({ models: ['model-a'] });
      const unknownPreset = await h.call('/v1/chat/completions', {
        secret: limited.secret,
        method: 'POST',
        body: chat({ model: '@preset/buyer-only' }),
      });
      expect(unknownPreset.status).toBe(403);
      const open = await h.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: chat({ model: '@preset/buyer-only' }),
      });
      expect(open.status).toBe(200);
      expect(JSON.parse(h.buyer.received.at(-1)!.body).model).toBe('@preset/buyer-only');
    } finally {
      await h.stop();
    }
  });
});
