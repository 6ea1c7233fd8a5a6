import { readFileSync, statSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRequestId } from '../../protocol/index.js';
import { waitFor } from '../../testing/index.js';
import { controlSecretPath } from '../server/controlSecret.js';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';
import { STUB_PEER_ID } from '../testing/stubBuyer.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ buyer: { costUsd: '0.000300' } });
});
afterAll(() => h.stop());

const lastReceived = (path: string) => h.buyer.received.filter((r) => r.path === path).at(-1)!;

describe('forwarding to the buyer', () => {
  it('serves the official OpenAI client on the /v1 base URL, streaming and not', async () => {
    const { key, secret } = await h.key();
    const client = new OpenAI({ apiKey: secret, baseURL: `${h.gateway.url}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'model-a',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0]?.message.content).toBe('hello');
    const stream = await client.chat.completions.create({
      model: 'model-a',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('part0 part1 part2 ');
    const usage = await waitFor(async () => {
      const u = await h.store.keyUsage(key.id);
      return u.requests === 2 && u;
    });
    expect(usage).toMatchObject({
      spentMicro: 600n,
      inputTokens: 24,
      cachedInputTokens: 4,
      outputTokens: 30,
    });
  });

  it('serves the official Anthropic client on the base URL without /v1', async () => {
    const { key, secret } = await h.key();
    const client = new Anthropic({
      authToken: secret,
      apiKey: null,
      baseURL: h.gateway.url,
      maxRetries: 0,
    });
    const message = await client.messages.create({
      model: 'model-a',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'hello' });
    const stream = client.messages.stream({
      model: 'model-a',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'part0 part1 part2 ' });
    const counted = await client.messages.countTokens({
      model: 'model-a',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(counted.input_tokens).toBe(12);
    await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 2);
    expect((await h.store.keyUsage(key.id)).spentMicro).toBe(600n);
  });

  it('strips credentials, cookies and client x-svc-* headers (a pin: src/gateway/server/pinHeader.test.ts); sets the control headers', async () => {
    const { secret } = await h.key();
    const response = await h.call('/v1/chat/completions', {
      secret,
      method: 'POST',
      body: JSON.stringify({ model: 'model-a', messages: [] }),
      headers: {
        cookie: 'session=abc',
        'x-api-key': 'sk-should-not-pass',
        'x-svc-buyer-identity': 'someone-else',
        'x-svc-gateway-auth': 'forged',
        'x-svc-end-user': 'alice',
        'x-custom': 'kept',
      },
    });
    expect(response.status).toBe(200);
    const { headers } = lastReceived('/v1/chat/completions');
    expect(headers.authorization).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
    expect(headers['x-api-key']).toBeUndefined();
    expect(headers['x-svc-end-user']).toBeUndefined();
    expect(headers['x-svc-buyer-identity']).toBe('default');
    expect(headers['x-svc-gateway-auth']).toBe(
      readFileSync(controlSecretPath(h.dataDir), 'utf8').trim(),
    );
    expect(statSync(controlSecretPath(h.dataDir)).mode & 0o777).toBe(0o600);
    expect(headers['x-svc-request-id']).toMatch(/^req_/);
    expect(headers['x-custom']).toBe('kept');
    expect(response.headers.get('x-svc-request-id')).toBe(headers['x-svc-request-id']);
  });

  it("gives a key's request the id form of the buyer's own requests, which its audits carry to sellers", async () => {
    // A paid request carries its id to the seller; the buyer's audits of a key's traffic get
    // the buyer's ids, so a second form would tell sellers which requests are audits
    // (docs/decisions/218-probe-tells-closed.md).
    const { secret } = await h.key();
    const before = Date.now();
    const response = await h.call('/v1/chat/completions', {
      secret,
      method: 'POST',
      body: JSON.stringify({ model: 'model-a', messages: [] }),
    });
    expect(response.status).toBe(200);
    const id = lastReceived('/v1/chat/completions').headers['x-svc-request-id'];
    // `req_`, then hex digits as many as the buyer's; hyphens or other letters would show.
    const form = (value: string) =>
      `${value.slice(0, 4)}${value.slice(4).replace(/[0-9a-f]/g, 'h')}`;
    expect(form(String(id))).toBe(form(newRequestId()));
    // Its time part is when the gateway made it, as the buyer's ids hold theirs.
    const made = Number.parseInt(String(id).slice(4, 16), 16);
    expect(made).toBeGreaterThanOrEqual(before);
    expect(made).toBeLessThanOrEqual(Date.now());
  });

  it('records the end user from the body or the header', async () => {
    const { key, secret } = await h.key();
    await h.call('/v1/chat/completions', {
      secret,
      method: 'POST',
      body: JSON.stringify({ model: 'model-a', messages: [], user: 'bob' }),
    });
    await h.call('/v1/chat/completions', {
      secret,
      method: 'POST',
      body: JSON.stringify({ model: 'model-a', messages: [] }),
      headers: { 'x-svc-end-user': 'carol' },
    });
    const rows = await waitFor(async () => {
      const all = await h.store.queryLogs({ keyId: key.id });
      return all.length === 2 && all;
    });
    expect(rows.map((r) => r.endUser).sort()).toEqual(['bob', 'carol']);
    expect(rows[0]).toMatchObject({
      status: 200,
      peerId: STUB_PEER_ID,
      provider: 'stub',
      servedModel: 'model-a',
      costMicro: 300n,
      inputTokens: 12,
      cachedInputTokens: 2,
      outputTokens: 15,
      streamed: false,
    });
    const byUser = await h.store.usageSummary('end_user', { keyId: key.id });
    expect(byUser).toHaveLength(2);
  });

  it('lists every model to a key with no model list: the catalog as the buyer sent it', async () => {
    const { key, secret } = await h.key();
    const response = await h.call('/v1/models', { secret });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const models = await jsonOf(response);
    expect(models).toMatchObject({ object: 'list' });
    expect(models.data.map((m: { id: string }) => m.id)).toEqual(['model-a', 'model-b']);
    expect(models.data[0]).toMatchObject({ object: 'model', name: 'model-a', peers: [] });
    expect(await h.store.keyUsage(key.id)).toMatchObject({ requests: 0, spentMicro: 0n });
  });

  it('lists only the allowed models, for free; count_tokens is free', async () => {
    const { key, secret } = await h.key({ models: ['model-b'] });
    const models = await jsonOf(await h.call('/v1/models', { secret }));
    expect(models.data.map((m: { id: string }) => m.id)).toEqual(['model-b']);
    await h.call('/v1/messages/count_tokens', {
      secret,
      method: 'POST',
      body: JSON.stringify({ model: 'model-b', messages: [] }),
    });
    expect(await h.store.keyUsage(key.id)).toMatchObject({ requests: 0, spentMicro: 0n });
    const refused = await h.call('/v1/messages', {
      secret,
      method: 'POST',
      body: JSON.stringify({ model: 'model-a', max_tokens: 5, messages: [] }),
    });
    expect(refused.status).toBe(403);
    expect(await jsonOf(refused)).toMatchObject({
      type: 'error',
      error: { code: 'model_not_allowed', type: 'permission_error' },
    });
  });

  it('answers 413 above the ingress body cap', async () => {
    const t = await startHarness({ gateway: { bodyLimitBytes: 100 } });
    try {
      const { secret } = await t.key();
      const response = await t.call('/v1/chat/completions', {
        secret,
        method: 'POST',
        body: JSON.stringify({ model: 'x'.repeat(200) }),
      });
      expect(response.status).toBe(413);
      expect(t.buyer.received).toHaveLength(0);
    } finally {
      await t.stop();
    }
  });

  it('forwards multipart image edits byte for byte, billed', async () => {
    const { key, secret } = await h.key();
    const form = new FormData();
    form.set('model', 'model-a');
    form.set('prompt', 'make it blue');
    form.set(
      'image',
      new Blob([new Uint8Array([137, 80, 78, 71, 0, 255])], { type: 'image/png' }),
      'a.png',
    );
    const response = await fetch(`${h.gateway.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}` },
      body: form,
    });
    expect(response.status).toBe(200);
    const got = lastReceived('/v1/images/edits');
    expect(String(got.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
    expect(got.body).toContain('make it blue');
    expect(got.body).toContain('filename="a.png"');
    await waitFor(async () => (await h.store.keyUsage(key.id)).requests === 1);
  });

  it('applies member policies too', async () => {
    const member = await h.store.createMember({
      id: 'mem_pol',
      name: 'polly',
      orgRole: 'none',
      keyQuota: null,
      createdAt: Date.now(),
    });
    const ws = (await h.store.findWorkspaceByName('Default'))!;
    await h.store.addMembership(member.id, ws.id, 'member');
    await h.store.setMemberPolicy(member.id, { allowedModels: ['model-b'] });
    const { secret } = await h.key({ member: 'polly' });
    const refused = await h.call('/v1/chat/completions', {
      secret,
      method: 'POST',
      body: JSON.stringify({ model: 'model-a', messages: [] }),
    });
    expect(refused.status).toBe(403);
    const models = await jsonOf(await h.call('/v1/models', { secret }));
    expect(models.data.map((m: { id: string }) => m.id)).toEqual(['model-b']);
  });

  it('answers 400 to a body that is not JSON', async () => {
    const { secret } = await h.key();
    const response = await h.call('/v1/chat/completions', {
      secret,
      method: 'POST',
      body: '{nope',
    });
    expect(response.status).toBe(400);
    expect((await jsonOf(response)).error.code).toBe('invalid_json');
  });
});
