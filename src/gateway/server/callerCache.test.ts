/**
 * The gateway keeps callers and their budget scopes in memory (SQLite), yet every change to a key,
 * member or workspace applies to the very next request: made by another connection (the CLI, a
 * second gateway) or by the gateway's own (docs/decisions/159-gateway-auth-and-sizing-without-counting.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../store/createStore.js';
import type { SqlGatewayStore } from '../store/SqlGatewayStore.js';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';

let h: Harness;
/** A second connection to the gateway's database, as the CLI opens. */
let other: SqlGatewayStore;
beforeAll(async () => {
  h = await startHarness({ buyer: { costUsd: '0.000100' } });
  other = await createStore({ dataDir: h.dataDir });
});
afterAll(async () => {
  await other.close();
  await h.stop();
});

const chat = JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }] });
const post = (secret: string) =>
  h.call('/v1/chat/completions', { secret, method: 'POST', body: chat });
const errorOf = async (response: Response) => (await jsonOf(response)).error;

/** Two served requests: the caller and its scopes are cached from here on. */
async function warm(secret: string): Promise<void> {
  for (let i = 0; i < 2; i += 1) expect((await post(secret)).status).toBe(200);
}

describe('cached callers see every change on the next request', () => {
  it('a key revoked by another connection is refused', async () => {
    const { key, secret } = await h.key();
    await warm(secret);
    await other.revokeKey(key.id, Date.now());
    const response = await post(secret);
    expect(response.status).toBe(401);
    expect((await errorOf(response)).code).toBe('key_revoked');
  });

  it("a key's limit set by another connection applies to its next reservation", async () => {
    const { key, secret } = await h.key({ limits: { total: 1_000_000n } });
    await warm(secret);
    await other.setKeyLimits(key.id, 'admin', { daily: 0n });
    const response = await post(secret);
    expect(response.status).toBe(402);
    expect(await errorOf(response)).toMatchObject({ level: 'key', period: 'daily' });
  });

  it("a workspace's limit and a member's disabling by another connection apply", async () => {
    await h.store.createWorkspace({ id: 'ws_c', name: 'c', identity: 'c', createdAt: Date.now() });
    await h.store.createMember({
      id: 'mem_c',
      name: 'c',
      orgRole: 'none',
      keyQuota: null,
      createdAt: Date.now(),
    });
    await h.store.addMembership('mem_c', 'ws_c', 'member');
    const { secret } = await h.key({ workspace: 'c', member: 'c' });
    await warm(secret);
    await other.setWorkspaceLimits('ws_c', { weekly: 0n });
    const limited = await post(secret);
    expect(limited.status).toBe(402);
    expect(await errorOf(limited)).toMatchObject({ level: 'workspace', period: 'weekly' });
    await other.setWorkspaceLimits('ws_c', { weekly: null });
    expect((await post(secret)).status).toBe(200);
    await other.setMemberDisabled('mem_c', true);
    const disabled = await post(secret);
    expect(disabled.status).toBe(401);
    expect((await errorOf(disabled)).message).toMatch(/member has been disabled/);
  });

  it("a key's policy changed by another connection applies", async () => {
    const { key, secret } = await h.key();
    await warm(secret);
    await other.setKeyPolicy(key.id, { allowedModels: ['model-b'] });
    const response = await post(secret);
    expect(response.status).toBe(403);
    expect((await errorOf(response)).code).toBe('model_not_allowed');
  });

  it("the gateway's own writes apply too (limits, revocation)", async () => {
    const { key, secret } = await h.key({ limits: { total: 1_000_000n } });
    await warm(secret);
    await h.store.setKeyLimits(key.id, 'owner', { monthly: 0n });
    const limited = await post(secret);
    expect(limited.status).toBe(402);
    expect(await errorOf(limited)).toMatchObject({ level: 'key', period: 'monthly' });
    await h.store.setKeyLimits(key.id, 'owner', { monthly: null });
    expect((await post(secret)).status).toBe(200);
    await h.store.revokeKey(key.id, Date.now());
    expect((await post(secret)).status).toBe(401);
  });
});
