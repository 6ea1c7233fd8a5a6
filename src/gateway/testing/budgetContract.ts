/** The budget part of the GatewayStore contract: reserve, settle, release, limits at every level. */
import { expect, it } from 'vitest';
import { periodStart } from '../budget/periods.js';
import { type GatewayStore, NO_LIMITS } from '../store/types.js';
import { fixture, spend, T0, USAGE, unique } from './storeFixture.js';

/** Registers the budget tests inside the contract's describe, on stores made by `open`. */
export function budgetContract(open: () => Promise<GatewayStore>): void {
  it('reserves the smaller of the request maximum and the room, then settles and releases', async () => {
    const store = await open();
    const { key } = await fixture(store, { daily: 1_000_000n });
    const first = await store.reserve({
      reservationId: unique('r'),
      keyId: key.id,
      maxAmountMicro: 600_000n,
      now: T0,
    });
    expect(first).toMatchObject({
      ok: true,
      reservation: { amountMicro: 600_000n, limited: true },
    });
    const second = await store.reserve({
      reservationId: unique('r'),
      keyId: key.id,
      maxAmountMicro: 600_000n,
      now: T0,
    });
    expect(second).toMatchObject({ ok: true, reservation: { amountMicro: 400_000n } });
    const third = await store.reserve({
      reservationId: unique('r'),
      keyId: key.id,
      maxAmountMicro: 1n,
      now: T0,
    });
    expect(third).toMatchObject({
      ok: false,
      refusal: { level: 'key', period: 'daily', limitMicro: 1_000_000n, spentMicro: 0n },
    });
    if (!first.ok || !second.ok) throw new Error('unreachable');
    const held = (await store.listReservations(T0 + 1)).filter((r) => r.keyId === key.id);
    expect(held.map((r) => r.id).sort()).toEqual(
      [first.reservation.id, second.reservation.id].sort(),
    );
    expect(held.reduce((sum, r) => sum + r.amountMicro, 0n)).toBe(1_000_000n);
    expect(await store.listReservations(T0)).not.toContainEqual(
      expect.objectContaining({ keyId: key.id }),
    );
    await store.settle({
      reservationId: first.reservation.id,
      requestId: 'a',
      costMicro: 250_000n,
      usage: USAGE,
      now: T0,
    });
    await store.settle({
      reservationId: first.reservation.id,
      requestId: 'a',
      costMicro: 250_000n,
      usage: USAGE,
      now: T0,
    });
    await store.release(second.reservation.id);
    expect((await store.periodSpend('key', key.id, T0)).daily).toBe(250_000n);
    const usage = await store.keyUsage(key.id);
    expect(usage).toEqual({
      requests: 1,
      spentMicro: 250_000n,
      inputTokens: 10,
      cachedInputTokens: 2,
      outputTokens: 5,
    });
    const fourth = await store.reserve({
      reservationId: unique('r'),
      keyId: key.id,
      maxAmountMicro: 5_000_000n,
      now: T0,
    });
    expect(fourth).toMatchObject({ ok: true, reservation: { amountMicro: 750_000n } });
  });

  it('charges a key with no limit anywhere what was paid, beyond its estimate', async () => {
    const store = await open();
    const { key } = await fixture(store, {});
    const result = await spend(store, key.id, 300n, 5_000n);
    expect(result).toMatchObject({
      ok: true,
      reservation: { amountMicro: 300n, limited: false },
    });
    expect((await store.periodSpend('key', key.id, T0)).total).toBe(5_000n);
    expect(await store.ledgerTotal(key.id)).toBe(5_000n);
  });

  it('settles a limited key at most the reservation, whatever cost is reported', async () => {
    const store = await open();
    const { key } = await fixture(store, { total: 1_000n });
    const result = await spend(store, key.id, 300n, 5_000n);
    expect(result).toMatchObject({ ok: true, reservation: { amountMicro: 300n } });
    expect((await store.periodSpend('key', key.id, T0)).total).toBe(300n);
    expect(await store.ledgerTotal(key.id)).toBe(300n);
    expect(await store.listReservations(T0 + 1)).not.toContainEqual(
      expect.objectContaining({ keyId: key.id }),
    );
  });

  it('uses the lower of admin and owner limits, and a lowered limit applies at once', async () => {
    const store = await open();
    const { key } = await fixture(store, { total: 1_000_000n });
    await spend(store, key.id, 500_000n, 500_000n);
    await store.setKeyLimits(key.id, 'owner', { total: 400_000n });
    const refused = await store.reserve({
      reservationId: unique('r'),
      keyId: key.id,
      maxAmountMicro: 1n,
      now: T0,
    });
    expect(refused).toMatchObject({
      ok: false,
      refusal: {
        level: 'key',
        period: 'total',
        limitMicro: 400_000n,
        spentMicro: 500_000n,
        resetsAt: null,
      },
    });
  });

  it('checks member and workspace budgets too', async () => {
    const store = await open();
    const { key, member, workspace } = await fixture(store);
    await store.setMemberLimits(member.id, { weekly: 300_000n });
    await spend(store, key.id, 300_000n, 300_000n);
    expect(await spend(store, key.id, 1n, 1n)).toMatchObject({
      ok: false,
      refusal: { level: 'member', period: 'weekly' },
    });
    await store.setMemberLimits(member.id, { weekly: null });
    await store.setWorkspaceLimits(workspace.id, { monthly: 300_000n });
    expect(await spend(store, key.id, 1n, 1n)).toMatchObject({
      ok: false,
      refusal: { level: 'workspace', period: 'monthly' },
    });
    expect((await store.periodSpend('workspace', workspace.id, T0)).monthly).toBe(300_000n);
  });

  it.each([
    ['daily', Date.UTC(2026, 2, 18, 23, 59, 59, 999), Date.UTC(2026, 2, 19)],
    ['weekly', Date.UTC(2026, 2, 22, 23, 59, 59, 999), Date.UTC(2026, 2, 23)],
    ['monthly', Date.UTC(2026, 2, 31, 23, 59, 59, 999), Date.UTC(2026, 3, 1)],
  ] as const)('a %s budget resets at its UTC boundary', async (period, justBefore, boundary) => {
    const store = await open();
    const { key } = await fixture(store, { [period]: 100n });
    await spend(store, key.id, 100n, 100n, T0);
    const refused = await spend(store, key.id, 1n, 1n, justBefore);
    expect(refused).toMatchObject({ ok: false, refusal: { period, resetsAt: boundary } });
    expect(periodStart(period, boundary)).toBe(boundary);
    expect(await spend(store, key.id, 100n, 100n, boundary)).toMatchObject({ ok: true });
    expect((await store.periodSpend('key', key.id, boundary))[period]).toBe(100n);
    expect((await store.periodSpend('key', key.id, boundary)).total).toBe(200n);
  });

  it('refuses naming the counter with the least room when several are short', async () => {
    const store = await open();
    const { key, workspace } = await fixture(store, { daily: 500n, total: 100n });
    await store.setWorkspaceLimits(workspace.id, { ...NO_LIMITS, weekly: 60n });
    await spend(store, key.id, 40n, 40n);
    // Room: key daily 460, key total 60, workspace weekly 20: the workspace is the tightest.
    const refused = await store.reserve({
      reservationId: unique('res'),
      keyId: key.id,
      maxAmountMicro: 100n,
      minAmountMicro: 100n,
      now: T0,
    });
    expect(refused).toMatchObject({
      ok: false,
      refusal: { level: 'workspace', period: 'weekly', limitMicro: 60n, committedMicro: 40n },
    });
  });

  it('never lets concurrent reservations exceed a limit; counters equal the ledger', async () => {
    const store = await open();
    const { key } = await fixture(store, { total: 1_000n });
    const results = await Promise.all(
      Array.from({ length: 40 }, () => spend(store, key.id, 100n, 100n)),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    const counter = (await store.periodSpend('key', key.id, T0)).total;
    expect(counter).toBe(1_000n);
    expect(await store.ledgerTotal(key.id)).toBe(counter);
  });
}
