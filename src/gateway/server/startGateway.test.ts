import { describe, expect, it } from 'vitest';
import { configSchema } from '../../config/index.js';
import { silentLogger } from '../../log/index.js';
import { removeTempDir, tempDir } from '../../testing/index.js';
import { createStore } from '../store/createStore.js';
import { startStubBuyer } from '../testing/stubBuyer.js';
import { newLogRow } from './requestLog.js';
import { startGateway } from './startGateway.js';

const DAY = 86_400_000;

describe('startGateway', () => {
  it('deletes request-log rows past the retention on start, keeps newer ones', async () => {
    const dataDir = tempDir('svc-gw-start-');
    const buyer = await startStubBuyer();
    const store = await createStore({ dataDir });
    try {
      const now = Date.UTC(2026, 5, 1);
      const row = (at: number) =>
        newLogRow({ at, method: 'GET', route: '/v1/key', clientAddress: null });
      await store.insertLog({ ...row(now - 3 * DAY), status: 200 });
      await store.insertLog({ ...row(now - DAY / 2), status: 200 });
      const config = configSchema.parse({
        gateway: { port: 0, buyerUrl: buyer.url, logRetentionDays: 1 },
      }).gateway;
      const gateway = await startGateway({
        config,
        dataDir,
        store,
        clock: () => now,
        logger: silentLogger(),
      });
      expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const rows = await store.queryLogs({});
      expect(rows.map((r) => r.at)).toEqual([now - DAY / 2]);
      await gateway.stop();
    } finally {
      await store.close();
      await buyer.stop();
      removeTempDir(dataDir);
    }
  });
});
