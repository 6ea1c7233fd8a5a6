import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { runConsoleTablesContract } from '../testing/consoleTablesContract.js';
import { runStoreContract } from '../testing/storeContract.js';
import { createStore } from './createStore.js';
import type { GatewayStore } from './types.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-gw-sqlite-'));
const opened: GatewayStore[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

runStoreContract('sqlite', async () => {
  const store = await createStore({ dataDir: dir });
  opened.push(store);
  return store;
});

runConsoleTablesContract('sqlite', async () => {
  const store = await createStore({ dataDir: dir });
  opened.push(store);
  return store;
});
