/**
 * A key's model allow-list (and a member's or workspace's) names models the way routing does:
 * cosmetic variants of a name are one model (docs/decisions/050-model-name-normalisation.md), so
 * `GET /v1/models` lists what the key may use, requests under any spelling pass, and two levels
 * that spell one model differently still allow it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ buyer: { models: ['gpt-4o', 'model-b'] } });
});
afterAll(() => h.stop());

const chat = (secret: string, model: string) =>
  h.call('/v1/chat/completions', {
    secret,
    method: 'POST',
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
const listed = async (secret: string) =>
  ((await jsonOf(await h.call('/v1/models', { secret }))).data as Array<{ id: string }>).map(
    (entry) => entry.id,
  );

describe('model allow-lists compare normalised names', () => {
  it('lists and serves a model the key names in another spelling', async () => {
    const { secret } = await h.key({ models: ['GPT-4o'] });
    expect(await listed(secret)).toEqual(['gpt-4o']);
    for (const model of ['gpt-4o', 'openai/gpt-4o-2024-08-06', 'GPT-4o']) {
      expect((await chat(secret, model)).status).toBe(200);
    }
    const other = await chat(secret, 'model-b');
    expect(other.status).toBe(403);
    expect((await jsonOf(other)).error.code).toBe('model_not_allowed');
  });

  it('keeps a model two levels spell differently', async () => {
    const member = await h.store.createMember({
      id: 'mem_spell',
      name: 'speller',
      orgRole: 'none',
      keyQuota: null,
      createdAt: Date.now(),
    });
    const ws = (await h.store.findWorkspaceByName('Default'))!;
    await h.store.addMembership(member.id, ws.id, 'member');
    await h.store.setMemberPolicy(member.id, { allowedModels: ['openai/gpt-4o'] });
    const { secret } = await h.key({ member: 'speller', models: ['GPT-4o', 'model-b'] });
    expect(await listed(secret)).toEqual(['gpt-4o']);
    expect((await chat(secret, 'gpt-4o')).status).toBe(200);
    expect((await chat(secret, 'model-b')).status).toBe(403);
  });
});
