/** The x402 TopupLedger contract against the SQL store, on SQLite and on a real PostgreSQL. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { topupLedgerContract } from '../../x402/testing/index.js';
import { startTestPostgres, type TestPostgres } from '../testing/embeddedPostgres.js';
import { createStore } from './createStore.js';
import { type GatewayStore, NO_LIMITS } from './types.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-gw-topups-'));
let pg: TestPostgres;
const opened: GatewayStore[] = [];
beforeAll(async () => {
  pg = await startTestPostgres();
});
afterAll(async () => {
  for (const store of opened) await store.close();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function fixture(store: GatewayStore) {
  return {
    ledger: store.topupLedger(),
    async newKeyId() {
      const id = randomUUID().slice(0, 8);
      const workspace = await store.createWorkspace({
        id: `ws_${id}`,
        name: `ws-${id}`,
        identity: `id-${id}`,
        createdAt: 0,
      });
      const key = await store.createKey({
        id: `key_${id}`,
        label: 'topup',
        secretHash: `hash_${id}`,
        workspaceId: workspace.id,
        memberId: null,
        identity: `id-${id}`,
        ownIdentity: true,
        allowedModels: null,
        topupEnabled: true,
        createdAt: 0,
        expiresAt: null,
        adminLimits: NO_LIMITS,
      });
      return key.id;
    },
  };
}

topupLedgerContract('sqlite', async () => {
  const store = await createStore({ dataDir: dir });
  opened.push(store);
  return fixture(store);
});

topupLedgerContract('postgres', async () => {
  const store = await createStore({ dataDir: '/nonexistent', databaseUrl: pg.url });
  opened.push(store);
  return fixture(store);
});
