import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../log/index.js';
import { startHarness } from '../testing/harness.js';
import { logRow } from '../testing/logRow.js';
import { recoverReservations } from './recoverReservations.js';

const HOUR = 3_600_000;

describe('orphaned reservations', () => {
  it('settles stale ones with the buyer-reported cost, or the whole reservation when unknown, and corrects their log rows', async () => {
    const h = await startHarness({ buyer: { costUsd: '0.000250' } });
    const buyer = new Pool(h.buyer.url);
    try {
      const { key } = await h.key({ limits: { total: 10_000n } });
      const now = Date.now();
      await h.store.reserve({
        reservationId: 'req_known',
        keyId: key.id,
        maxAmountMicro: 1_000n,
        now: now - 2 * HOUR,
      });
      await h.store.reserve({
        reservationId: 'req_lost',
        keyId: key.id,
        maxAmountMicro: 1_000n,
        now: now - 2 * HOUR,
      });
      await h.store.reserve({
        reservationId: 'req_fresh',
        keyId: key.id,
        maxAmountMicro: 1_000n,
        now,
      });
      // The request path logged req_known when its cost could not be learned.
      const unknownCost = {
        requestId: 'req_known',
        costMicro: 0n,
        inputTokens: 0,
        outputTokens: 0,
        errorCode: 'spend_tracking_unavailable',
      };
      await h.store.insertLog(logRow(key.id, now - 2 * HOUR - 5, unknownCost));
      await h.store.insertLog(logRow(key.id, now - 2 * HOUR - 4, { requestId: 'req_other' }));
      // The buyer served req_known before the gateway died.
      await fetch(`${h.buyer.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-request-id': 'req_known' },
        body: JSON.stringify({ model: 'model-a', messages: [] }),
      }).then((r) => r.arrayBuffer());
      const settled = await recoverReservations({
        store: h.store,
        buyer,
        now,
        staleAfterMs: HOUR,
        logger: silentLogger(),
      });
      expect(settled).toBe(2);
      expect(await h.store.ledgerTotal(key.id)).toBe(250n + 1_000n);
      const rows = await h.store.queryLogs({ keyId: key.id });
      expect(rows.find((row) => row.requestId === 'req_known')).toMatchObject({
        costMicro: 250n,
        errorCode: null,
      });
      expect(rows.find((row) => row.requestId === 'req_other')).toMatchObject({ costMicro: 100n });
      expect((await h.store.listReservations(now + 1)).map((r) => r.id)).toEqual(['req_fresh']);
      const next = await h.store.reserve({
        reservationId: 'probe',
        keyId: key.id,
        maxAmountMicro: 100_000n,
        now,
      });
      expect(next).toMatchObject({
        ok: true,
        reservation: { amountMicro: 10_000n - 1_250n - 1_000n },
      });
    } finally {
      await buyer.close();
      await h.stop();
    }
  });

  it('charges nothing for a request the buyer proves it never committed to, and waits for one in flight', async () => {
    const now = Date.now();
    const h = await startHarness({
      buyer: { costUsd: '0.000250', journalSinceMs: now - 3 * HOUR, chunkDelayMs: 200 },
    });
    const buyer = new Pool(h.buyer.url);
    try {
      const { key } = await h.key({ limits: { total: 10_000n } });
      for (const id of ['req_never', 'req_streaming']) {
        await h.store.reserve({
          reservationId: id,
          keyId: key.id,
          maxAmountMicro: 1_000n,
          now: now - 2 * HOUR,
        });
      }
      // req_streaming is still streaming at the buyer: its record is open.
      const streaming = fetch(`${h.buyer.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-request-id': 'req_streaming' },
        body: JSON.stringify({ model: 'model-a', messages: [], stream: true }),
      }).then((r) => r.text());
      await new Promise((resolve) => setTimeout(resolve, 50));
      const options = { store: h.store, buyer, now, staleAfterMs: HOUR, logger: silentLogger() };
      expect(await recoverReservations(options)).toBe(1);
      expect(await h.store.ledgerTotal(key.id)).toBe(0n);
      expect((await h.store.listReservations(now + 1)).map((r) => r.id)).toEqual(['req_streaming']);
      await streaming;
      expect(await recoverReservations(options)).toBe(1);
      expect(await h.store.ledgerTotal(key.id)).toBe(250n);
      expect(await h.store.listReservations(now + 1)).toEqual([]);
    } finally {
      await buyer.close();
      await h.stop();
    }
  });
});
