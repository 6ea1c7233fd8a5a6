import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../testing/index.js';
import { periodSpendOf } from '../testing/budgetProbe.js';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';

const T0 = Date.UTC(2026, 2, 18, 12, 0, 0, 5);
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ now: T0, buyer: { costUsd: '0.000300' } });
});
afterAll(() => h.stop());

const chat = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }], ...extra });
const post = (secret: string, path = '/v1/chat/completions', body = chat()) =>
  h.call(path, { secret, method: 'POST', body });
const received = (requestId: string | null) =>
  h.buyer.received.find((r) => r.headers['x-svc-request-id'] === requestId)!;

describe('budgets through the gateway', () => {
  it('caps the buyer at the smallest room and refuses with 402 when none is left', async () => {
    const { key, secret } = await h.key({ limits: { total: 900n } });
    const first = await post(secret);
    expect(first.status).toBe(200);
    expect(received(first.headers.get('x-svc-request-id')).headers['x-svc-max-cost-usd']).toBe(
      '0.000900',
    );
    await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 1);
    const second = await post(secret);
    expect(received(second.headers.get('x-svc-request-id')).headers['x-svc-max-cost-usd']).toBe(
      '0.000600',
    );
    expect((await post(secret)).status).toBe(200);
    await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 3);
    const refused = await post(secret);
    expect(refused.status).toBe(402);
    expect((await jsonOf(refused)).error).toMatchObject({
      code: 'spend_limit_reached',
      type: 'insufficient_quota',
      level: 'key',
      period: 'total',
      limit_usd: '0.000900',
      spent_usd: '0.000900',
      remaining_usd: '0.000000',
      resets_at: null,
    });
    const anthropic = await post(
      secret,
      '/v1/messages',
      JSON.stringify({ model: 'model-a', max_tokens: 5, messages: [] }),
    );
    expect(await jsonOf(anthropic)).toMatchObject({
      type: 'error',
      error: { type: 'billing_error', code: 'spend_limit_reached' },
    });
    expect(await h.store.ledgerTotal(key.id)).toBe(900n);
  });

  it('sends no cost cap for a key without limits at any level', async () => {
    const { secret } = await h.key();
    const response = await post(secret);
    expect(
      received(response.headers.get('x-svc-request-id')).headers['x-svc-max-cost-usd'],
    ).toBeUndefined();
  });

  it('GET /v1/key returns its documented shape, field by field', async () => {
    const { key, secret } = await h.key({
      label: 'ci-bot',
      limits: { daily: 5_000_000n, weekly: 1_000n },
      expiresAt: Date.UTC(2027, 0, 1),
    });
    await h.store.setKeyLimits(key.id, 'owner', { weekly: 2_000n, monthly: 3_000_000n });
    await post(secret);
    await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 1);
    const view = await jsonOf(await h.call('/v1/key', { secret }));
    expect(Object.keys(view)).toEqual(['data']);
    expect(view.data).toEqual({
      id: key.id,
      label: 'ci-bot',
      created_at: '2026-03-18T12:00:00.005Z',
      expires_at: '2027-01-01T00:00:00.000Z',
      topup_enabled: false,
      buyer_address: h.identities.loadDefault().record.address,
      usage: {
        requests: 1,
        spent_usd: '0.000300',
        topped_up_usd: '0.000000',
        input_tokens: 12,
        cached_input_tokens: 2,
        output_tokens: 15,
      },
      limits: {
        daily: { limit_usd: '5.000000', spent_usd: '0.000300', remaining_usd: '4.999700' },
        weekly: { limit_usd: '0.001000', spent_usd: '0.000300', remaining_usd: '0.000700' },
        monthly: { limit_usd: '3.000000', spent_usd: '0.000300', remaining_usd: '2.999700' },
        total: { limit_usd: null, spent_usd: '0.000300', remaining_usd: null },
      },
    });
    expect(key.id).toMatch(/^key_[A-Za-z0-9_-]{16}$/);
  });

  it('a limit lowered below the spend refuses the next request at once', async () => {
    const { key, secret } = await h.key();
    await post(secret);
    await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 1);
    await h.store.setKeyLimits(key.id, 'admin', { daily: 100n });
    const refused = await post(secret);
    expect(refused.status).toBe(402);
    expect((await jsonOf(refused)).error).toMatchObject({
      level: 'key',
      period: 'daily',
      resets_at: '2026-03-19T00:00:00.000Z',
    });
  });

  it('member and workspace budgets stop requests before the key does', async () => {
    const ws = await h.store.createWorkspace({
      id: 'ws_budget',
      name: 'budget-team',
      identity: 'budget-team',
      createdAt: T0,
    });
    const member = await h.store.createMember({
      id: 'mem_budget',
      name: 'dora',
      orgRole: 'none',
      keyQuota: null,
      createdAt: T0,
    });
    await h.store.addMembership(member.id, ws.id, 'member');
    const { secret } = await h.key({ workspace: 'budget-team', member: 'dora' });
    await h.store.setMemberLimits(member.id, { weekly: 300n });
    expect((await post(secret)).status).toBe(200);
    await waitFor(async () => (await periodSpendOf(h, 'member', member.id)).weekly === 300n);
    expect((await jsonOf(await post(secret))).error).toMatchObject({
      level: 'member',
      period: 'weekly',
      resets_at: '2026-03-23T00:00:00.000Z',
    });
    await h.store.setMemberLimits(member.id, { weekly: null });
    await h.store.setWorkspaceLimits(ws.id, { monthly: 300n });
    expect((await jsonOf(await post(secret))).error).toMatchObject({
      level: 'workspace',
      period: 'monthly',
      resets_at: '2026-04-01T00:00:00.000Z',
    });
    expect(received(null)).toBeUndefined();
    expect(h.buyer.received.at(-1)?.headers['x-svc-buyer-identity']).toBe('budget-team');
  });
});
