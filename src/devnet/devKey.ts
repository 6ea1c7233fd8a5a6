/**
 * The gateway key `svc up` hands out. Its secret is kept in `<data-dir>/dev/gateway-key.json`
 * (0600) so a resumed local network prints the same key: a development convenience only; the
 * gateway itself stores just the hash.
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../config/index.js';
import { createKey, createStore } from '../gateway/index.js';
import { IdentityStore } from '../identity/index.js';

export interface DevKey {
  id: string;
  secret: string;
  weeklyLimitUsd: string;
}

const WEEKLY_LIMIT_MICRO = 5_000_000n;

/** Returns the saved key when it is still active, else creates one in the Default workspace. */
export async function ensureDevKey(buyerDataDir: string, keyFile: string): Promise<DevKey> {
  const store = await createStore({ dataDir: buyerDataDir });
  try {
    const saved = readSaved(keyFile);
    if (saved) {
      const key = await store.getKey(saved.id);
      if (key && key.revokedAt === null && (key.expiresAt === null || key.expiresAt > Date.now()))
        return saved;
    }
    const created = await createKey(
      store,
      new IdentityStore(buyerDataDir),
      { label: 'svc up', limits: { weekly: WEEKLY_LIMIT_MICRO } },
      Date.now(),
    );
    const devKey: DevKey = { id: created.key.id, secret: created.secret, weeklyLimitUsd: '5.00' };
    writeFileAtomic(keyFile, `${JSON.stringify(devKey, null, 2)}\n`);
    return devKey;
  } finally {
    await store.close();
  }
}

function readSaved(path: string): DevKey | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DevKey;
  } catch {
    return undefined;
  }
}
