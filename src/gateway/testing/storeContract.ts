/** The one contract suite every GatewayStore implementation runs. */
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../store/migrations.js';
import { type GatewayStore, NO_LIMITS } from '../store/types.js';
import { budgetContract } from './budgetContract.js';
import { logRow } from './logRow.js';
import { fixture, T0, unique } from './storeFixture.js';

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

    budgetContract(open);

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
