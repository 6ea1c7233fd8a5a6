/** The console's rows on every store (sessions, one-time links, audit, daily spend, key edits). */
import { describe, expect, it } from 'vitest';
import type { GatewayStore } from '../store/types.js';
import { logRow } from './logRow.js';
import { fixture } from './storeFixture.js';

const T0 = Date.UTC(2026, 2, 18, 12, 0, 0);
const DAY = 86_400_000;
let counter = 0;
const unique = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

export function runConsoleTablesContract(name: string, open: () => Promise<GatewayStore>): void {
  describe(`console tables: ${name}`, () => {
    it('keeps sessions until expiry or deletion, by hash', async () => {
      const tables = (await open()).consoleTables();
      const idHash = unique('h');
      await tables.createSession({
        idHash,
        kind: 'member',
        subjectId: 'mem_1',
        csrfToken: 'csrf',
        createdAt: T0,
        expiresAt: T0 + 1000,
      });
      expect(await tables.getSession(idHash, T0 + 999)).toMatchObject({
        kind: 'member',
        subjectId: 'mem_1',
        csrfToken: 'csrf',
      });
      expect(await tables.getSession(idHash, T0 + 1000)).toBeNull();
      await tables.deleteSessionsOf('member', 'mem_1');
      expect(await tables.getSession(idHash, T0)).toBeNull();
    });

    it('uses a sign-in link once, and never after its expiry', async () => {
      const tables = (await open()).consoleTables();
      const [fresh, stale] = [unique('t'), unique('t')];
      await tables.createLoginLink({
        tokenHash: fresh,
        subjectId: '',
        createdAt: T0,
        expiresAt: T0 + 10,
      });
      await tables.createLoginLink({
        tokenHash: stale,
        subjectId: 'm',
        createdAt: T0,
        expiresAt: T0 + 10,
      });
      expect(await tables.consumeLoginLink(fresh, T0 + 5)).toBe('');
      expect(await tables.consumeLoginLink(fresh, T0 + 5)).toBeNull();
      expect(await tables.consumeLoginLink(stale, T0 + 10)).toBeNull();
      expect(await tables.consumeLoginLink('unknown', T0)).toBeNull();
    });

    it('lists audit entries newest first', async () => {
      const tables = (await open()).consoleTables();
      const target = unique('key');
      await tables.insertAudit({
        id: unique('a'),
        at: T0,
        actor: 'operator',
        action: 'key.revoke',
        target,
        detail: '{}',
      });
      await tables.insertAudit({
        id: unique('a'),
        at: T0 + 1,
        actor: 'member:ann',
        action: 'key.edit',
        target,
        detail: '{"label":"x"}',
      });
      const mine = (await tables.listAudit(1000)).filter((e) => e.target === target);
      expect(mine.map((e) => e.action)).toEqual(['key.edit', 'key.revoke']);
    });

    it('sums spend per UTC day from the request log and edits key details', async () => {
      const store = await open();
      const { key } = await fixture(store);
      const row = (at: number, costMicro: bigint) =>
        logRow(key.id, at, { workspaceId: key.workspaceId, costMicro });
      const day0 = Math.floor(T0 / DAY) * DAY;
      await store.insertLogs([row(day0 + 1, 100n), row(day0 + DAY - 1, 200n), row(day0 + DAY, 5n)]);
      const days = await store.consoleTables().dailySpend({ keyId: key.id, since: day0 - DAY });
      expect(days).toEqual([
        { day: day0, requests: 2, costMicro: 300n },
        { day: day0 + DAY, requests: 1, costMicro: 5n },
      ]);
      await store.consoleTables().setKeyDetails(key.id, {
        label: 'renamed',
        expiresAt: T0 + DAY,
        allowedModels: ['a', 'b'],
      });
      expect(await store.getKey(key.id)).toMatchObject({
        label: 'renamed',
        expiresAt: T0 + DAY,
        allowedModels: ['a', 'b'],
      });
      await store.consoleTables().setKeyDetails(key.id, { expiresAt: null, allowedModels: null });
      expect(await store.getKey(key.id)).toMatchObject({
        label: 'renamed',
        expiresAt: null,
        allowedModels: null,
      });
    });
  });
}
