import { afterAll, beforeAll } from 'vitest';
import { runConsoleTablesContract } from '../testing/consoleTablesContract.js';
import { startTestPostgres, type TestPostgres } from '../testing/embeddedPostgres.js';
import { runStoreContract } from '../testing/storeContract.js';
import { createStore } from './createStore.js';
import type { GatewayStore } from './types.js';

let pg: TestPostgres;
const opened: GatewayStore[] = [];
beforeAll(async () => {
  pg = await startTestPostgres();
});
afterAll(async () => {
  for (const store of opened) await store.close();
  await pg?.stop();
});

runStoreContract('postgres', async () => {
  const store = await createStore({ dataDir: '/nonexistent', databaseUrl: pg.url });
  opened.push(store);
  return store;
});

runConsoleTablesContract('postgres', async () => {
  const store = await createStore({ dataDir: '/nonexistent', databaseUrl: pg.url });
  opened.push(store);
  return store;
});
