import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../testing/index.js';
import { newLogRow } from '../../server/requestLog.js';
import { createStore } from '../createStore.js';

const rows = (count: number) =>
  Array.from({ length: count }, (_, index) => ({
    ...newLogRow({
      at: 1_000 + index,
      method: 'POST',
      route: '/v1/chat/completions',
      clientAddress: '127.0.0.1',
    }),
    keyId: 'key_checkpoint',
    status: 200,
  }));

describe('background WAL checkpoints (SQLite)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('copies committed pages into the database file from a worker thread, and closes cleanly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-gw-ckpt-'));
    dirs.push(dir);
    const store = await createStore({ dataDir: dir, sqliteBackgroundCheckpointMs: 10 });
    const file = join(dir, 'gateway', 'gateway.db');
    // The commits stay far below the backstop (10,000 WAL pages): only the worker checkpoints.
    await waitFor(async () => statSync(file).size > 0);
    const before = statSync(file).size;
    await store.insertLogs(rows(500));
    await waitFor(async () => statSync(file).size > before);
    await store.close();
    const reopened = await createStore({ dataDir: dir });
    expect(await reopened.queryLogs({ keyId: 'key_checkpoint' })).toHaveLength(500);
    await reopened.close();
  });

  it('is not started for an in-memory database', async () => {
    const store = await createStore({
      dataDir: tmpdir(),
      sqlitePath: ':memory:',
      sqliteBackgroundCheckpointMs: 10,
    });
    await store.insertLogs(rows(3));
    expect(await store.queryLogs({ keyId: 'key_checkpoint' })).toHaveLength(3);
    await store.close();
  });
});
