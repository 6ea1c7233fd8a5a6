import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore, type GatewayStore } from '../../../gateway/index.js';
import { removeTempDir, tempDir } from '../../../testing/index.js';
import { runCli } from '../../testing/runCli.js';

let dataDir: string;
const svc = (...args: string[]) => runCli(['--data-dir', dataDir, 'gateway', ...args]);
const svcJson = async (...args: string[]) => {
  const run = await runCli(['--data-dir', dataDir, '--json', 'gateway', ...args]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout);
};
async function withStore<T>(body: (store: GatewayStore) => Promise<T>): Promise<T> {
  const store = await createStore({ dataDir });
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

beforeAll(() => {
  dataDir = tempDir('svc-gw-cli-');
});
afterAll(() => removeTempDir(dataDir));

describe('svc gateway key', () => {
  it('creates a key, shows its secret once, stores only the hash', async () => {
    const created = await svcJson(
      'key',
      'create',
      '--label',
      'ci',
      '--weekly-limit',
      '5',
      '--expires-in-days',
      '30',
      '--models',
      'm1, m2',
    );
    expect(created.id).toMatch(/^key_/);
    expect(created.secret).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({
      label: 'ci',
      state: 'active',
      identity: 'default',
      allowedModels: ['m1', 'm2'],
      limits: { weekly: '5.000000', daily: null },
    });
    const stored = await withStore((store) => store.getKey(created.id));
    expect(
      JSON.stringify(stored, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
    ).not.toContain(created.secret);
    expect(stored?.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(dataDir, 'gateway', 'control.secret')).mode & 0o777).toBe(0o600);
    const listed = await svcJson('key', 'list');
    expect(listed.find((k: { id: string }) => k.id === created.id)).not.toHaveProperty('secret');
    const table = await svc('key', 'list');
    expect(table.stdout).toContain(created.id);
    expect(table.stdout).not.toContain(created.secret);
  });

  it('refuses bad input with one-line errors', async () => {
    // A bad argument (a value that does not parse or names nothing, flags that exclude each other)
    // exits 2; an operation refused for what is stored exits 1.
    for (const [args, pattern, code] of [
      [['--daily-limit', '-1'], /negative/, 2],
      [['--total-limit', 'ten'], /not a USD amount/, 2],
      [['--expires', 'tomorrowish'], /not a date/, 2],
      [['--expires', '2001-01-01'], /in the past/, 2],
      [['--expires-in-days', '0'], /positive whole number/, 2],
      [['--workspace', 'nope'], /no workspace named "nope"/, 2],
      [['--allow-topup'], /own wallet/, 1],
      [['--identity', 'ghost'], /no identity named "ghost"/, 2],
      [['--new-identity', '--identity', 'x'], /not both/, 2],
    ] as const) {
      const run = await svc('key', 'create', '--label', 'bad', ...args);
      expect(run.code, args.join(' ')).toBe(code);
      expect(run.stderr).toMatch(pattern);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('shows, limits (owner and admin), rotates, toggles top-up and revokes', async () => {
    const created = await svcJson(
      'key',
      'create',
      '--label',
      'own',
      '--new-identity',
      '--allow-topup',
    );
    expect(created).toMatchObject({ ownIdentity: true, topupEnabled: true, identity: created.id });
    const workspaces = await svcJson('workspace', 'list');
    expect(workspaces.some((w: { identity: string }) => w.identity === created.id)).toBe(true);
    const limited = await svcJson('key', 'limits', created.id, '--daily-limit', '3', '--owner');
    expect(limited.limits.daily).toBe('3.000000');
    await svcJson('key', 'limits', created.id, '--daily-limit', '2');
    const shown = await svcJson('key', 'show', created.id);
    expect(shown).toMatchObject({
      adminLimits: { daily: '2.000000' },
      ownerLimits: { daily: '3.000000' },
      limits: { daily: '2.000000' },
    });
    expect(shown.view.buyer_address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect((await svc('key', 'limits', created.id)).stderr).toMatch(/at least one/);
    const rotated = await svcJson('key', 'rotate', created.id);
    expect(rotated.secret).not.toBe(created.secret);
    expect((await svcJson('key', 'topup', created.id, 'off')).topupEnabled).toBe(false);
    expect((await svc('key', 'topup', created.id, 'maybe')).stderr).toMatch(/on" or "off/);
    expect((await svcJson('key', 'revoke', created.id)).revoked).toBe(true);
    expect((await svcJson('key', 'show', created.id)).state).toBe('revoked');
    expect((await svc('key', 'rotate', created.id)).stderr).toMatch(
      /revoked keys cannot be rotated/,
    );
    const plain = await svcJson('key', 'create', '--label', 'plain');
    expect((await svc('key', 'topup', plain.id, 'on')).stderr).toMatch(/own wallet/);
    expect((await svc('key', 'show', 'key_missing')).stderr).toMatch(/no key key_missing/);
  });

  it('notes when a limit is lowered below the current spend', async () => {
    const created = await svcJson('key', 'create', '--label', 'spender');
    await withStore(async (store) => {
      const result = await store.reserve({
        reservationId: 'r1',
        keyId: created.id,
        maxAmountMicro: 2_000_000n,
        now: Date.now(),
      });
      if (!result.ok) throw new Error('reserve failed');
      await store.settle({
        reservationId: 'r1',
        requestId: 'q1',
        costMicro: 2_000_000n,
        usage: { inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 },
        now: Date.now(),
      });
    });
    const run = await svc('key', 'limits', created.id, '--daily-limit', '1');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/daily spend 2\.000000 already reaches the limit/);
  });
});

describe('svc gateway workspace, member, policy, preset', () => {
  it('manages workspaces and members with quotas', async () => {
    const ws = await svcJson('workspace', 'create', 'research', '--new-identity');
    expect(ws).toMatchObject({ name: 'research', identity: 'research' });
    expect((await svc('workspace', 'create', 'again', '--identity', 'research')).stderr).toMatch(
      /already pays/,
    );
    expect(
      (await svcJson('workspace', 'limits', 'research', '--monthly-limit', '100')).limits.monthly,
    ).toBe('100.000000');
    const member = await svcJson(
      'member',
      'add',
      'ann',
      '--workspace',
      'research',
      '--role',
      'admin',
      '--org-role',
      'owner',
      '--key-quota',
      '1',
    );
    expect(member).toMatchObject({ name: 'ann', orgRole: 'owner', keyQuota: 1 });
    expect(member.workspaces[0].role).toBe('admin');
    const first = await svcJson(
      'key',
      'create',
      '--label',
      'a1',
      '--workspace',
      'research',
      '--member',
      'ann',
    );
    expect(first.memberId).toBe(member.id);
    const second = await svc(
      'key',
      'create',
      '--label',
      'a2',
      '--workspace',
      'research',
      '--member',
      'ann',
    );
    expect(second.stderr).toMatch(/already has 1 active keys/);
    expect((await svc('key', 'create', '--label', 'a3', '--member', 'ann')).stderr).toMatch(
      /does not belong to workspace "Default"/,
    );
    await svcJson('member', 'limits', 'ann', '--weekly-limit', '7', '--key-quota', 'none');
    await svcJson('member', 'disable', 'ann');
    const members = await svcJson('member', 'list');
    expect(members.find((m: { name: string }) => m.name === 'ann')).toMatchObject({
      disabled: true,
      keyQuota: null,
      limits: { weekly: '7.000000' },
    });
    expect((await svc('member', 'add', 'bob', '--role', 'boss')).stderr).toMatch(/admin or member/);
  });

  it('sets and shows policies per scope, and manages presets', async () => {
    const peer = 'ab'.repeat(20);
    const set = await svcJson(
      'policy',
      'set',
      '--workspace',
      'Default',
      '--min-trust',
      '75',
      '--block-sellers',
      `0x${peer.toUpperCase()}`,
      '--max-output-price',
      '12.5',
      '--sort',
      'free-first',
    );
    expect(set.policy).toEqual({
      minTrustScore: 75,
      blockedPeerIds: [peer],
      maxPricing: { outputUsdPerMillion: 12.5 },
      sort: 'free-first',
    });
    expect((await svcJson('policy', 'show', '--workspace', 'Default')).policy.minTrustScore).toBe(
      75,
    );
    expect(
      (await svc('policy', 'set', '--workspace', 'Default', '--min-trust', '120')).stderr,
    ).toMatch(/invalid policy/);
    expect((await svc('policy', 'set', '--min-trust', '1')).stderr).toMatch(/exactly one/);
    const key = await svcJson('key', 'create', '--label', 'pol');
    await svcJson('policy', 'set', '--key', key.id, '--models', 'm1');
    expect((await svcJson('policy', 'show', '--key', key.id)).policy).toEqual({
      allowedModels: ['m1'],
    });
    await svcJson('policy', 'set', '--key', key.id, '--clear');
    expect((await svcJson('policy', 'show', '--key', key.id)).policy).toBeNull();
    await svcJson('preset', 'create', 'fast', '--model', 'm1', '--min-trust', '80');
    await svcJson('preset', 'create', 'fast', '--workspace', 'research', '--min-trust', '90');
    const presets = await svcJson('preset', 'list');
    expect(presets).toHaveLength(2);
    expect((await svcJson('preset', 'remove', 'fast', '--workspace', 'research')).removed).toBe(
      true,
    );
    expect((await svc('preset', 'remove', 'fast', '--workspace', 'research')).stderr).toMatch(
      /no preset/,
    );
  });
});

describe('svc gateway logs and usage', () => {
  it('prints logs as JSON and CSV, and usage by dimension', async () => {
    await withStore(async (store) => {
      const base = {
        at: Date.now(),
        requestId: 'req_1',
        workspaceId: 'ws',
        memberId: null,
        clientAddress: null,
        method: 'POST',
        route: '/v1/chat/completions',
        requestedModel: 'm1',
        servedModel: 'm1',
        peerId: 'ab'.repeat(20),
        provider: 'p',
        serviceId: 'm1',
        status: 200,
        errorCode: null,
        inputTokens: 3,
        cachedInputTokens: 1,
        outputTokens: 4,
        latencyMs: 9,
        ttfbMs: 3,
        streamed: false,
      };
      await store.insertLog({
        ...base,
        id: 'l1',
        keyId: 'key_logs',
        endUser: 'eve, "the tester"',
        costMicro: 1500n,
      });
      await store.insertLog({
        ...base,
        id: 'l2',
        keyId: 'key_logs',
        endUser: 'eve, "the tester"',
        costMicro: 500n,
      });
    });
    const rows = await svcJson('logs', '--key', 'key_logs', '--since', '1h');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ keyId: 'key_logs', costUsd: '0.000500', status: 200 });
    const csv = await svc('logs', '--key', 'key_logs', '--csv');
    expect(csv.stdout.split('\n')[0]).toMatch(/^at,requestId,keyId/);
    expect(csv.stdout).toContain('"eve, ""the tester"""');
    const usage = await svcJson('usage', '--by', 'end_user', '--key', 'key_logs');
    expect(usage).toEqual([
      {
        group: 'eve, "the tester"',
        requests: 2,
        inputTokens: 6,
        cachedInputTokens: 2,
        outputTokens: 8,
        costUsd: '0.002000',
      },
    ]);
    expect((await svc('usage', '--by', 'planet')).stderr).toMatch(/--by must be one of/);
    expect((await svc('logs', '--since', 'yesterday-ish')).stderr).toMatch(/not a time/);
    expect((await svc('usage', '--by', 'model')).stdout).toContain('m1');
  });
});
