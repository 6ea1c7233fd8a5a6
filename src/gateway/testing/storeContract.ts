/** The one contract suite every GatewayStore implementation runs. */
import { describe, expect, it } from 'vitest';
import { periodStart } from '../budget/periods.js';
import { MIGRATIONS } from '../store/migrations.js';
import { type GatewayStore, type NewKey, NO_LIMITS } from '../store/types.js';
import { logRow } from './logRow.js';

const T0 = Date.UTC(2026, 2, 18, 12, 0, 0); // Wednesday 18 March 2026, 12:00 UTC
const USAGE = { inputTokens: 10, cachedInputTokens: 2, outputTokens: 5 };
let counter = 0;
const unique = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

/** A workspace, a member in it and a key of the member (also used by consoleTablesContract). */
export async function fixture(store: GatewayStore, limits: Partial<NewKey['adminLimits']> = {}) {
  const identity = unique('id');
  const workspace = await store.createWorkspace({
    id: unique('ws'),
    name: unique('team'),
    identity,
    createdAt: T0,
  });
  const member = await store.createMember({
    id: unique('mem'),
    name: unique('ann'),
    orgRole: 'none',
    keyQuota: null,
    createdAt: T0,
  });
  await store.addMembership(member.id, workspace.id, 'member');
  const key = await store.createKey({
    id: unique('key'),
    label: 'ci',
    secretHash: unique('hash'),
    workspaceId: workspace.id,
    memberId: member.id,
    identity,
    ownIdentity: false,
    allowedModels: null,
    topupEnabled: false,
    createdAt: T0,
    expiresAt: null,
    adminLimits: { ...NO_LIMITS, ...limits },
  });
  return { workspace, member, key };
}

async function spend(store: GatewayStore, keyId: string, max: bigint, cost: bigint, now = T0) {
  const result = await store.reserve({
    reservationId: unique('res'),
    keyId,
    maxAmountMicro: max,
    now,
  });
  if (!result.ok) return result;
  await store.settle({
    reservationId: result.reservation.id,
    requestId: unique('req'),
    costMicro: cost,
    usage: USAGE,
    now,
  });
  return result;
}

/** Runs the suite against stores made by `open` (each call may share one database). */
export function runStoreContract(name: string, open: () => Promise<GatewayStore>): void {
  describe(`GatewayStore contract: ${name}`, () => {
    it('migrates idempotently', async () => {
      const store = await open();
      const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
      expect(await store.migrate()).toBe(latest);
      expect(await store.migrate()).toBe(latest);
    });

    it('stores workspaces, members and memberships', async () => {
      const store = await open();
      const { workspace, member } = await fixture(store);
      expect((await store.findWorkspaceByIdentity(workspace.identity))?.id).toBe(workspace.id);
      expect((await store.findWorkspaceByName(workspace.name))?.identity).toBe(workspace.identity);
      await store.setWorkspaceLimits(workspace.id, { monthly: 5_000_000n });
      await store.setWorkspacePolicy(workspace.id, { minTrustScore: 70 });
      const updated = await store.getWorkspace(workspace.id);
      expect(updated?.limits).toEqual({ ...NO_LIMITS, monthly: 5_000_000n });
      expect(updated?.policy).toEqual({ minTrustScore: 70 });
      expect((await store.listWorkspaces()).map((w) => w.id)).toContain(workspace.id);
      await store.setMemberDisabled(member.id, true);
      await store.setMemberQuota(member.id, 3);
      await store.setMemberLimits(member.id, { daily: 1n });
      await store.addMembership(member.id, workspace.id, 'admin');
      const loaded = await store.findMemberByName(member.name);
      expect(loaded).toMatchObject({ disabled: true, keyQuota: 3, orgRole: 'none' });
      expect(loaded?.limits.daily).toBe(1n);
      expect(loaded?.workspaces).toEqual([{ workspaceId: workspace.id, role: 'admin' }]);
      await expect(
        store.createWorkspace({
          id: unique('ws'),
          name: unique('t'),
          identity: workspace.identity,
          createdAt: T0,
        }),
      ).rejects.toThrow();
    });

    it('stores keys: lookup by hash, revoke, rotate, limits, top-up, policy', async () => {
      const store = await open();
      const { key, member } = await fixture(store, { weekly: 2_000_000n });
      expect((await store.findKeyBySecretHash(key.secretHash))?.id).toBe(key.id);
      expect(key.adminLimits.weekly).toBe(2_000_000n);
      expect(key.ownerLimits).toEqual(NO_LIMITS);
      expect(await store.countKeysOfMember(member.id)).toBe(1);
      expect(await store.rotateKey(key.id, 'newhash')).toBe(true);
      expect(await store.findKeyBySecretHash(key.secretHash)).toBeNull();
      expect((await store.findKeyBySecretHash('newhash'))?.id).toBe(key.id);
      await store.setKeyLimits(key.id, 'owner', { weekly: 1_000_000n, daily: 10n });
      await store.setKeyLimits(key.id, 'admin', { weekly: null });
      await store.setKeyTopup(key.id, true);
      await store.setKeyPolicy(key.id, { allowedModels: ['m1'] });
      const edited = await store.getKey(key.id);
      expect(edited?.adminLimits.weekly).toBeNull();
      expect(edited?.ownerLimits).toEqual({ ...NO_LIMITS, weekly: 1_000_000n, daily: 10n });
      expect(edited?.topupEnabled).toBe(true);
      expect(edited?.policy).toEqual({ allowedModels: ['m1'] });
      await store.addKeyTopUp(key.id, 2_500_000n);
      await store.addKeyTopUp(key.id, 500_000n);
      expect((await store.getKey(key.id))?.toppedUpMicro).toBe(3_000_000n);
      expect(await store.revokeKey(key.id, T0 + 1)).toBe(true);
      expect(await store.revokeKey(key.id, T0 + 2)).toBe(false);
      expect((await store.getKey(key.id))?.revokedAt).toBe(T0 + 1);
      expect(await store.rotateKey(key.id, 'other')).toBe(false);
      expect(await store.countKeysOfMember(member.id)).toBe(0);
      expect((await store.listKeys({ memberId: member.id })).length).toBe(1);
    });

    it('finds a caller (key, member, workspace) by secret hash in one read, current every time', async () => {
      const store = await open();
      const { key, member, workspace } = await fixture(store, { daily: 7n });
      await store.setMemberPolicy(member.id, { minTrustScore: 40 });
      await store.setWorkspaceLimits(workspace.id, { total: 9n });
      const found = await store.findCaller(key.secretHash);
      expect(found?.key).toEqual(await store.getKey(key.id));
      const { workspaces: _memberships, ...memberCore } = (await store.getMember(member.id))!;
      expect(found?.member).toEqual(memberCore);
      expect(found?.workspace).toEqual(await store.getWorkspace(workspace.id));
      expect(found?.member?.policy).toEqual({ minTrustScore: 40 });
      expect(found?.workspace?.limits.total).toBe(9n);
      await store.setMemberDisabled(member.id, true);
      await store.setKeyLimits(key.id, 'owner', { daily: 3n });
      const again = await store.findCaller(key.secretHash);
      expect(again?.member?.disabled).toBe(true);
      expect(again?.key.ownerLimits.daily).toBe(3n);
      await store.revokeKey(key.id, T0 + 5);
      expect((await store.findCaller(key.secretHash))?.key.revokedAt).toBe(T0 + 5);
      expect(await store.findCaller(unique('nohash'))).toBeNull();
      const loose = await store.createKey({
        ...key,
        id: unique('key'),
        secretHash: unique('hash'),
        memberId: null,
        adminLimits: NO_LIMITS,
      });
      const alone = await store.findCaller(loose.secretHash);
      expect(alone).toMatchObject({ key: { id: loose.id }, member: null });
      expect(alone?.workspace?.id).toBe(workspace.id);
    });

    it('stores presets per owner', async () => {
      const store = await open();
      const name = unique('fast');
      await store.upsertPreset({
        name,
        owner: '',
        model: null,
        policy: { minTrustScore: 80 },
        createdAt: T0,
      });
      await store.upsertPreset({
        name,
        owner: '',
        model: null,
        policy: { minTrustScore: 90 },
        createdAt: T0,
      });
      await store.upsertPreset({ name, owner: 'ws_a', model: 'm', policy: {}, createdAt: T0 });
      expect((await store.getPreset(name, ''))?.policy).toEqual({ minTrustScore: 90 });
      expect((await store.listPresets()).filter((p) => p.name === name)).toHaveLength(2);
      expect(await store.removePreset(name, 'ws_a')).toBe(true);
      expect(await store.getPreset(name, 'ws_a')).toBeNull();
    });

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

    it('logs requests, filters, summarises and prunes', async () => {
      const store = await open();
      const keyId = unique('key');
      await store.insertLog(logRow(keyId, T0, { endUser: 'u1', costMicro: 300n }));
      await store.insertLog(
        logRow(keyId, T0 + 10, { endUser: 'u2', status: 402, errorCode: 'spend_limit_reached' }),
      );
      await store.insertLog(logRow(null, T0 + 20, { status: 401, errorCode: 'unauthorized' }));
      const rows = await store.queryLogs({ keyId });
      expect(rows.map((r) => r.endUser)).toEqual(['u2', 'u1']);
      expect(rows[1]).toMatchObject({ costMicro: 300n, streamed: false, ttfbMs: 2 });
      expect(await store.queryLogs({ keyId, since: T0 + 5 })).toHaveLength(1);
      const byUser = await store.usageSummary('end_user', { keyId });
      expect(byUser.find((r) => r.group === 'u1')).toMatchObject({ requests: 1, costMicro: 300n });
      expect(await store.pruneLogs(T0 + 15)).toBeGreaterThanOrEqual(2);
      expect(await store.queryLogs({ keyId })).toHaveLength(0);
    });

    it('leaves requests nothing served out of usage and counts them apart', async () => {
      const store = await open();
      const keyId = unique('key');
      await store.insertLog(logRow(keyId, T0, { peerId: 'p1', costMicro: 300n }));
      // Refused by the gateway (no model was served) and by the buyer's routing: no seller, $0.
      const refused = { status: 402, errorCode: 'spend_limit_reached', costMicro: 0n };
      await store.insertLog(logRow(keyId, T0 + 1, { ...refused, servedModel: null }));
      await store.insertLog(
        logRow(keyId, T0 + 2, { status: 502, errorCode: 'model_not_found', costMicro: 0n }),
      );
      // A seller failed after its answer began: it was served, at no cost.
      await store.insertLog(
        logRow(keyId, T0 + 3, { status: 502, peerId: 'p1', costMicro: 0n, endUser: 'u' }),
      );
      // The key's own free routes are not requests to a model, answered or refused.
      const free = { servedModel: null, requestedModel: null, costMicro: 0n, method: 'GET' };
      await store.insertLog(logRow(keyId, T0 + 4, { ...free, route: '/v1/key' }));
      await store.insertLog(logRow(keyId, T0 + 5, { ...free, route: '/v1/models' }));
      await store.insertLog(
        logRow(keyId, T0 + 6, { ...free, route: '/v1/key/topup', status: 403 }),
      );
      for (const by of ['model', 'seller', 'key', 'end_user'] as const) {
        const rows = await store.usageSummary(by, { keyId });
        expect(rows.reduce((sum, row) => sum + row.requests, 0)).toBe(2);
      }
      expect(await store.usageSummary('model', { keyId })).toEqual([
        expect.objectContaining({ group: 'gpt-x', requests: 2, costMicro: 300n }),
      ]);
      expect(await store.unservedRequests({ keyId })).toBe(2);
      expect(await store.unservedRequests({ keyId, since: T0 + 2 })).toBe(1);
    });
  });
}
