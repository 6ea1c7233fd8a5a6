import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../migrations.js';
import { SqlGatewayStore } from '../SqlGatewayStore.js';
import { SqliteDb } from '../sqlite/SqliteDb.js';
import { NO_LIMITS } from '../types.js';
import type { SqlExecutor } from './SqlDb.js';

/** SQLite that counts its transactions (each one a commit). */
class CountingDb extends SqliteDb {
  transactions = 0;
  override transaction<T>(body: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    this.transactions++;
    return super.transaction(body);
  }
}

const USAGE = { inputTokens: 10, cachedInputTokens: 0, outputTokens: 20 };
let dir: string;
let db: CountingDb;
let store: SqlGatewayStore;
let keyId: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-settle-'));
  db = new CountingDb(join(dir, 'gateway.db'));
  await migrate(db, Date.now());
  store = new SqlGatewayStore(db);
  const workspace = await store.createWorkspace({
    id: 'ws_1',
    name: 'team',
    identity: 'team',
    createdAt: Date.now(),
  });
  const key = await store.createKey({
    id: 'key_1',
    label: 'k',
    secretHash: 'ab'.repeat(32),
    workspaceId: workspace.id,
    memberId: null,
    identity: workspace.identity,
    ownIdentity: false,
    allowedModels: null,
    topupEnabled: false,
    createdAt: Date.now(),
    expiresAt: null,
    adminLimits: { ...NO_LIMITS, total: 10_000n },
  });
  keyId = key.id;
  db.transactions = 0;
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const reserve = (id: string, amount: bigint) =>
  store.reserve({
    reservationId: id,
    keyId,
    maxAmountMicro: amount,
    minAmountMicro: amount,
    now: Date.now(),
  });
const settle = (id: string, costMicro: bigint, usage = USAGE) =>
  store.settle({ reservationId: id, requestId: id, costMicro, usage, now: Date.now() });

describe('settlements sharing transactions (SQLite, decision 156)', () => {
  it('commits the settlements of concurrent requests together, every one charged once', async () => {
    await Promise.all(
      Array.from({ length: 32 }, async (_, i) => {
        expect((await reserve(`r${i}`, 200n)).ok).toBe(true);
        await settle(`r${i}`, 100n);
      }),
    );
    // One transaction per reservation, the settlements riding along: far fewer than 64.
    expect(db.transactions).toBeLessThan(48);
    expect(await store.ledgerTotal(keyId)).toBe(3_200n);
    expect((await store.periodSpend('key', keyId, Date.now())).total).toBe(3_200n);
    expect(await store.listReservations(Date.now() + 1)).toEqual([]);
  });

  it('applies a pending settlement before the next reservation checks the room', async () => {
    expect((await reserve('a', 10_000n)).ok).toBe(true);
    const settled = settle('a', 1_000n);
    // A sequential client at its limit: the room its last request released is there at once.
    expect((await reserve('b', 9_000n)).ok).toBe(true);
    await settled;
    expect(db.transactions).toBe(2);
    expect((await reserve('c', 1n)).ok).toBe(false);
    expect(await store.ledgerTotal(keyId)).toBe(1_000n);
  });

  it('retries a failing settlement alone: the reservation carrying it and the others succeed', async () => {
    expect((await reserve('bad', 1_000n)).ok).toBe(true);
    expect((await reserve('good', 1_000n)).ok).toBe(true);
    // NaN tokens break the ledger insert (NOT NULL) after the reservation row is deleted.
    const failing = settle('bad', 500n, { ...USAGE, inputTokens: Number.NaN });
    const passing = settle('good', 500n);
    expect((await reserve('next', 1_000n)).ok).toBe(true);
    await expect(failing).rejects.toThrow();
    await passing;
    // The failed settlement was undone whole: its reservation is still held, nothing charged.
    const held = await store.listReservations(Date.now() + 1);
    expect(held.map((r) => r.id).sort()).toEqual(['bad', 'next']);
    expect(await store.ledgerTotal(keyId)).toBe(500n);
  });

  it('reservations arriving together share a transaction and admit exactly what fits', async () => {
    const results = await Promise.all(
      Array.from({ length: 32 }, (_, i) => reserve(`c${i}`, 1_000n)),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    expect(db.transactions).toBeLessThan(4);
    const held = await store.listReservations(Date.now() + 1);
    expect(held.map((r) => r.amountMicro)).toEqual(Array.from({ length: 10 }, () => 1_000n));
    expect((await store.periodSpend('key', keyId, Date.now())).total).toBe(0n);
  });

  it('a reservation after a quiet spell commits without waiting for a turn of the event loop', async () => {
    // Decision 212: a sequential request does not wait for others to join its batch.
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    expect((await reserve('alone', 1_000n)).ok).toBe(true);
    expect(turned).toBe(false);
    expect(db.transactions).toBe(1);
    // Its settlement still waits for the turn, and the next reservation, close behind, shares it.
    const settled = settle('alone', 400n);
    expect((await reserve('next', 9_600n)).ok).toBe(true);
    await settled;
    expect(db.transactions).toBe(2);
    expect((await reserve('over', 1n)).ok).toBe(false);
    expect(await store.ledgerTotal(keyId)).toBe(400n);
  });

  it('a reservation that fails in a shared transaction fails alone', async () => {
    const unknown = store.reserve({
      reservationId: 'ghost',
      keyId: 'key_missing',
      maxAmountMicro: 1n,
      minAmountMicro: 1n,
      now: Date.now(),
    });
    const known = reserve('real', 1_000n);
    await expect(unknown).rejects.toThrow(/unknown key/);
    expect((await known).ok).toBe(true);
    const held = await store.listReservations(Date.now() + 1);
    expect(held.map((r) => r.id)).toEqual(['real']);
  });
});
