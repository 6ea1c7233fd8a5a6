import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../testing/index.js';
import { createStore } from '../store/createStore.js';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';

const T0 = Date.UTC(2026, 2, 18, 12, 0, 0, 123);
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ now: T0, gateway: { authFailuresPerMinute: 1000 } });
});
afterAll(() => h.stop());

const chat = { model: 'model-a', messages: [{ role: 'user', content: 'hi' }] };

describe('gateway authentication', () => {
  it('answers 401 to a missing, malformed or unknown key, in the route style', async () => {
    const missing = await h.call('/v1/chat/completions', {
      method: 'POST',
      body: JSON.stringify(chat),
    });
    expect(missing.status).toBe(401);
    expect((await jsonOf(missing)).error).toMatchObject({
      code: 'unauthorized',
      type: 'authentication_error',
    });
    const malformed = await h.call('/v1/messages', {
      method: 'POST',
      body: '{}',
      headers: { authorization: 'Basic abc' },
    });
    expect(malformed.status).toBe(401);
    const body = await jsonOf(malformed);
    expect(body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect(body.error.message).toMatch(/malformed/);
    const notSvc = await h.call('/v1/chat/completions', {
      method: 'POST',
      body: JSON.stringify(chat),
      headers: { authorization: 'Bearer sk-openai-key' },
    });
    expect(notSvc.status).toBe(401);
    expect((await jsonOf(notSvc)).error.message).toMatch(/not an svc API key/);
    // An Anthropic-style x-api-key is not read; the answer says how to send the key instead.
    const { secret } = await h.key();
    const viaApiKey = await h.call('/v1/messages', {
      method: 'POST',
      body: '{}',
      headers: { 'x-api-key': secret },
    });
    expect(viaApiKey.status).toBe(401);
    expect((await jsonOf(viaApiKey)).error.message).toMatch(/bearer token, not in x-api-key/);
    const unknown = await h.call('/v1/key', { secret: `svc_${'A'.repeat(43)}` });
    expect(unknown.status).toBe(401);
    expect((await jsonOf(unknown)).error.message).toMatch(/not known to this gateway/);
  });

  it('shows a refused key to both official SDKs at once, on either route, without retries', async () => {
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const bogus = `svc_${'B'.repeat(43)}`;
    // Each client on the other vendor's route too: coding tools choose their SDK, not the route.
    const anthropic = new Anthropic({
      authToken: bogus,
      apiKey: null,
      baseURL: h.gateway.url,
      fetch: counting,
    });
    const openai = new OpenAI({ apiKey: bogus, baseURL: `${h.gateway.url}/v1`, fetch: counting });
    const failures = [
      await anthropic.messages
        .create({ model: 'model-a', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })
        .catch((error: unknown) => error),
      await openai.chat.completions.create(chat as never).catch((error: unknown) => error),
      await openai.post('/messages', { body: {} }).catch((error: unknown) => error),
    ];
    expect(failures[0]).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(failures[1]).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(failures[2]).toBeInstanceOf(OpenAI.AuthenticationError);
    for (const failure of failures) {
      expect(String(failure)).toMatch(/not known to this gateway/);
    }
    expect(calls).toBe(3);
  });

  it('refuses a key of another gateway (another database)', async () => {
    const other = await createStore({ dataDir: h.dataDir, sqlitePath: ':memory:' });
    const { createKey } = await import('../admin/createKey.js');
    const foreign = await createKey(other, h.identities, { label: 'elsewhere' }, T0);
    await other.close();
    expect((await h.call('/v1/key', { secret: foreign.secret })).status).toBe(401);
  });

  it('answers 404 to other paths', async () => {
    const { secret } = await h.key();
    const response = await h.call('/v1/nope', { secret });
    expect(response.status).toBe(404);
    expect((await jsonOf(response)).error.code).toBe('not_found');
    expect((await h.call('/v1/chat/completions', { secret })).status).toBe(404);
  });

  it('revoking from another store handle (another process) applies on the next request', async () => {
    const { key, secret } = await h.key();
    expect((await h.call('/v1/key', { secret })).status).toBe(200);
    const cli = await createStore({ dataDir: h.dataDir });
    await cli.revokeKey(key.id, T0);
    await cli.close();
    const response = await h.call('/v1/key', { secret });
    expect(response.status).toBe(401);
    expect((await jsonOf(response)).error.code).toBe('key_revoked');
  });

  it('the CLI (its own database connection) revokes, limits and rotates for the running gateway', async () => {
    const { runCli } = await import('../../cli/testing/runCli.js');
    const { key, secret } = await h.key();
    const cli = (...args: string[]) =>
      runCli(['--data-dir', h.dataDir, '--json', 'gateway', ...args]);
    expect((await cli('key', 'limits', key.id, '--daily-limit', '0')).code).toBe(0);
    const limited = await h.call('/v1/chat/completions', {
      secret,
      method: 'POST',
      body: JSON.stringify(chat),
    });
    expect(limited.status).toBe(402);
    const rotated = JSON.parse((await cli('key', 'rotate', key.id)).stdout) as { secret: string };
    expect((await h.call('/v1/key', { secret })).status).toBe(401);
    expect((await h.call('/v1/key', { secret: rotated.secret })).status).toBe(200);
    expect((await cli('key', 'revoke', key.id)).code).toBe(0);
    expect((await h.call('/v1/key', { secret: rotated.secret })).status).toBe(401);
  });

  it('rotating keeps the key and stops the old secret at once', async () => {
    const { key, secret } = await h.key();
    const { rotateKey } = await import('../admin/createKey.js');
    const rotated = await rotateKey(h.store, key.id);
    expect(rotated.secret).not.toBe(secret);
    expect((await h.call('/v1/key', { secret })).status).toBe(401);
    const view = await jsonOf(await h.call('/v1/key', { secret: rotated.secret }));
    expect(view.data.id).toBe(key.id);
  });

  it("a disabled member's keys are refused with 401 on the next request", async () => {
    const member = await h.store.createMember({
      id: 'mem_off',
      name: 'off',
      orgRole: 'none',
      keyQuota: null,
      createdAt: T0,
    });
    const ws = (await h.store.findWorkspaceByName('Default'))!;
    await h.store.addMembership(member.id, ws.id, 'member');
    const { secret } = await h.key({ member: 'off' });
    expect((await h.call('/v1/key', { secret })).status).toBe(200);
    await h.store.setMemberDisabled(member.id, true);
    const response = await h.call('/v1/key', { secret });
    expect(response.status).toBe(401);
    expect((await jsonOf(response)).error.message).toMatch(/member has been disabled/);
  });

  it('an expired key is refused with 401', async () => {
    const { secret } = await h.key({ expiresAt: T0 + 1000 });
    expect((await h.call('/v1/key', { secret })).status).toBe(200);
    h.clock.now = T0 + 1000;
    const response = await h.call('/v1/key', { secret });
    h.clock.now = T0;
    expect(response.status).toBe(401);
    expect((await jsonOf(response)).error.code).toBe('key_expired');
  });

  it('logs refused requests without secrets', async () => {
    const secret = `svc_${'B'.repeat(43)}`;
    await h.call('/v1/key', { secret, headers: { 'user-agent': 'log-probe' } });
    const rows = await waitFor(async () => {
      const all = await h.store.queryLogs({ since: T0 });
      return all.some((row) => row.errorCode === 'unauthorized' && row.route === '/v1/key') && all;
    });
    const refused = rows.find((row) => row.errorCode === 'unauthorized' && row.route === '/v1/key');
    expect(refused).toMatchObject({ route: '/v1/key', errorCode: 'unauthorized', keyId: null });
    expect(JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(
      secret,
    );
    expect(rows.some((row) => row.status === 404)).toBe(true);
  });
});

describe('failed-authentication throttle', () => {
  it('answers 429 with Retry-After after repeated failures from one address', async () => {
    const t = await startHarness({ gateway: { authFailuresPerMinute: 3 } });
    try {
      for (let i = 0; i < 3; i++)
        expect((await t.call('/v1/key', { secret: `svc_${'C'.repeat(43)}` })).status).toBe(401);
      const { secret } = await t.key();
      const slowed = await t.call('/v1/key', { secret });
      expect(slowed.status).toBe(429);
      expect(Number(slowed.headers.get('retry-after'))).toBeGreaterThan(0);
      await waitFor(async () => (await t.store.queryLogs({})).some((row) => row.status === 429));
    } finally {
      await t.stop();
    }
  });
});
