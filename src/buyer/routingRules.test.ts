import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { peerIdFor } from '../catalog/testing/peerRecord.js';
import { RouteStateStore } from '../routing/index.js';
import { type ErrorBody, type ModelList, readJson } from './testing/readJson.js';
import { chatCompletion, openAiError } from './testing/sellerReplies.js';
import { scoreAll, startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

const free = { inputUsdPerMillion: 0, outputUsdPerMillion: 0 };
let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

async function buyer(config: Record<string, unknown> = {}, reputation = scoreAll(80)) {
  t = await startTestBuyer({ config, reputation });
  const a = t.network.addSeller(
    {
      peerId: 'a',
      services: [
        { id: 'gpt-4o', pricing: free },
        { id: 'o3', pricing: free },
      ],
    },
    (c) => chatCompletion(c, 'from a'),
  );
  const b = t.network.addSeller({ peerId: 'b', services: [{ id: 'gpt-4o', pricing: free }] }, (c) =>
    chatCompletion(c, 'from b'),
  );
  const paid = t.network.addSeller(
    {
      peerId: 'paid',
      services: [
        { id: 'claude-opus-4', pricing: { inputUsdPerMillion: 15, outputUsdPerMillion: 75 } },
      ],
    },
    (c) => chatCompletion(c, 'from paid'),
  );
  return { t, a, b, paid };
}

function post(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return fetch(`${t!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

describe('model forms', () => {
  it('follows the persisted default route for "svc", else 400 no_default_route', async () => {
    const { a } = await buyer();
    const missing = await post({ model: 'svc' });
    expect(missing.status).toBe(400);
    expect((await readJson<ErrorBody>(missing)).error.code).toBe('no_default_route');
    new RouteStateStore(t!.dataDir).update((state) => ({ ...state, defaultRoute: 'o3' }));
    const routed = await post({ model: 'svc' });
    expect(routed.status).toBe(200);
    expect(routed.headers.get('x-svc-peer-id')).toBe(a);
    expect(routed.headers.get('x-svc-service')).toBe('o3');
  });

  it('applies presets (model, system prompt, default params) and rejects unknown ones', async () => {
    const { b } = await buyer({
      presets: {
        coder: {
          model: 'gpt-4o',
          system: 'Answer in code.',
          params: { temperature: 0.1, top_p: 0.5 },
          routingPreferences: { blockedPeerIds: [] },
        },
        onlyB: { model: 'gpt-4o', routingPreferences: { allowedPeerIds: [] } },
      },
    });
    const response = await post({ model: '@preset/coder', top_p: 0.9 });
    expect(response.status).toBe(200);
    const call = t!.network.calls.at(-1)!;
    expect(call.json.messages).toEqual([
      { role: 'system', content: 'Answer in code.' },
      { role: 'user', content: 'hi' },
    ]);
    expect(call.json.temperature).toBe(0.1);
    expect(call.json.top_p).toBe(0.9);
    expect(call.json.model).toBe('gpt-4o');
    void b;
    const unknown = await post({ model: '@preset/nope' });
    expect(unknown.status).toBe(400);
    const body = await readJson<ErrorBody>(unknown);
    expect(body.error.code).toBe('unknown_preset');
    expect(body.error.message).toContain('coder');
  });

  it('pins by header over model prefix over session pin', async () => {
    const { a, b } = await buyer();
    new RouteStateStore(t!.dataDir).update((state) => ({ ...state, sessionPin: b }));
    expect((await post({ model: 'gpt-4o' })).headers.get('x-svc-peer-id')).toBe(b);
    expect((await post({ model: `${a}@gpt-4o` })).headers.get('x-svc-peer-id')).toBe(a);
    expect(
      (await post({ model: `${a}@gpt-4o` }, { 'x-svc-pin-peer': `0x${b}` })).headers.get(
        'x-svc-peer-id',
      ),
    ).toBe(b);
    // The seller sees only its own service id, never the peer prefix.
    expect(t!.network.calls.at(-1)!.json.model).toBe('gpt-4o');
  });

  it('answers 502 naming an unknown pinned peer and suggesting svc network browse', async () => {
    await buyer();
    const unknown = 'ab'.repeat(20);
    const response = await post({ model: `${unknown}@gpt-4o` });
    expect(response.status).toBe(502);
    const body = await readJson<ErrorBody>(response);
    expect(body.error.code).toBe('peer_unreachable');
    expect(body.error.message).toContain(unknown);
    expect(body.error.message).toContain('svc network browse');
  });

  it('answers 502 for a pinned seller that cannot be reached', async () => {
    const { a } = await buyer();
    t!.network.setReachable(a, false);
    const response = await post({ model: `${a}@gpt-4o` });
    expect(response.status).toBe(502);
    expect((await readJson<ErrorBody>(response)).error.message).toContain(a);
  });

  it('answers model_not_found with exclusion reasons when the trust gate drops everyone', async () => {
    await buyer({}, scoreAll(10));
    const response = await post({ model: 'gpt-4o' });
    expect(response.status).toBe(502);
    const body = await readJson<ErrorBody>(response);
    expect(body.error.code).toBe('model_not_found');
    expect(body.error.excluded).toHaveLength(2);
    expect(body.error.message).toContain('trust score 10 below minimum 60');
  });

  it('answers 402 insufficient_deposits for a paid seller while payments are not set up', async () => {
    await buyer();
    const response = await post({ model: 'claude-opus-4' });
    expect(response.status).toBe(402);
    expect((await readJson<ErrorBody>(response)).error.code).toBe('insufficient_deposits');
  });
});

describe('conversation affinity', () => {
  it('keeps later turns with the seller that served the first turn', async () => {
    // a scores 95, b 80: at equal prices a ranks first, even after one failure (95 - 10 > 80).
    const { a, b } = await buyer({}, scoreAll(80, { [peerIdFor('a')]: 95 }));
    // Make a fail once so b serves turn 1.
    let failures = 1;
    t!.network.setScript(a, (c) =>
      failures-- > 0 ? openAiError(500, 'x') : chatCompletion(c, 'from a'),
    );
    const turn1 = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'first question' },
    ];
    const one = await post({ model: 'gpt-4o', messages: turn1 });
    expect(one.headers.get('x-svc-peer-id')).toBe(b);
    const two = await post({
      model: 'gpt-4o',
      messages: [
        ...turn1,
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'second' },
      ],
    });
    expect(two.headers.get('x-svc-peer-id')).toBe(b);
    // A different conversation goes to the best-ranked seller again.
    const other = await post({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'new chat' }],
    });
    expect(other.headers.get('x-svc-peer-id')).toBe(a);
  });
});

describe('responses API state', () => {
  it('sends previous_response_id to the seller that produced that response', async () => {
    const scores: Record<string, number> = { [peerIdFor('r1')]: 95, [peerIdFor('r2')]: 80 };
    t = await startTestBuyer({ reputation: { score: (peerId) => scores[peerId] } });
    const reply = (id: string) => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id,
        object: 'response',
        created_at: 1,
        status: 'completed',
        model: 'o3',
        output: [
          {
            type: 'message',
            id: `msg_${id}`,
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: id, annotations: [] }],
          },
        ],
        usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 },
      }),
    });
    const service = { id: 'o3', pricing: free, protocols: ['openai-responses' as const] };
    const r1 = t.network.addSeller({ peerId: 'r1', services: [service] }, () => reply('resp_r1'));
    const r2 = t.network.addSeller({ peerId: 'r2', services: [service] }, () => reply('resp_r2'));
    const call = (body: Record<string, unknown>) =>
      fetch(`${t!.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'o3', ...body }),
      });
    const first = await call({ input: 'start' });
    expect(first.headers.get('x-svc-peer-id')).toBe(r1);
    // r2 now ranks first for anything new...
    scores[peerIdFor('r1')] = 70;
    scores[peerIdFor('r2')] = 99;
    expect((await call({ input: 'unrelated' })).headers.get('x-svc-peer-id')).toBe(r2);
    // ...but the follow-up of r1's stored response goes to r1.
    const followUp = await call({ input: 'and then?', previous_response_id: 'resp_r1' });
    expect(followUp.headers.get('x-svc-peer-id')).toBe(r1);
  });
});

describe('gateway headers', () => {
  function secret(dataDir: string): string {
    mkdirSync(join(dataDir, 'gateway'), { recursive: true });
    writeFileSync(join(dataDir, 'gateway', 'control.secret'), 'ab'.repeat(32), { mode: 0o600 });
    return 'ab'.repeat(32);
  }
  const policy = (value: Record<string, unknown>) =>
    Buffer.from(JSON.stringify(value)).toString('base64url');

  it('requires the control secret for identities other than default once it exists', async () => {
    await buyer();
    const before = await post({ model: 'gpt-4o' }, { 'x-svc-buyer-identity': 'team-a' });
    expect(before.status).toBe(200);
    const key = secret(t!.dataDir);
    const refused = await post({ model: 'gpt-4o' }, { 'x-svc-buyer-identity': 'team-a' });
    expect(refused.status).toBe(401);
    expect((await readJson<ErrorBody>(refused)).error.code).toBe('gateway_auth_required');
    const wrong = await post(
      { model: 'gpt-4o' },
      { 'x-svc-buyer-identity': 'team-a', 'x-svc-gateway-auth': 'nope' },
    );
    expect(wrong.status).toBe(401);
    const ok = await post(
      { model: 'gpt-4o' },
      { 'x-svc-buyer-identity': 'team-a', 'x-svc-gateway-auth': key },
    );
    expect(ok.status).toBe(200);
  });

  it('narrows routing with an authenticated policy, pins included; ignores it without auth', async () => {
    const { a, b } = await buyer();
    const key = secret(t!.dataDir);
    const blockA = policy({ blockedPeerIds: [a] });
    const unauthenticated = await post(
      { model: `${a}@gpt-4o` },
      { 'x-svc-routing-policy': blockA },
    );
    expect(unauthenticated.headers.get('x-svc-peer-id')).toBe(a);
    const pinned = await post(
      { model: `${a}@gpt-4o` },
      { 'x-svc-routing-policy': blockA, 'x-svc-gateway-auth': key },
    );
    expect(pinned.status).toBe(502);
    expect((await readJson<ErrorBody>(pinned)).error.code).toBe('model_not_found');
    const routed = await post(
      { model: 'gpt-4o' },
      { 'x-svc-routing-policy': blockA, 'x-svc-gateway-auth': key },
    );
    expect(routed.headers.get('x-svc-peer-id')).toBe(b);
    const models = await post(
      { model: 'gpt-4o' },
      { 'x-svc-routing-policy': policy({ allowedModels: ['o3'] }), 'x-svc-gateway-auth': key },
    );
    expect(models.status).toBe(403);
    expect((await readJson<ErrorBody>(models)).error.code).toBe('model_not_allowed');
    const listed = await readJson<ModelList>(
      await fetch(`${t!.url}/v1/models`, {
        headers: {
          'x-svc-routing-policy': policy({ allowedModels: ['o3'] }),
          'x-svc-gateway-auth': key,
        },
      }),
    );
    expect(listed.data.map((m) => m.id)).toEqual(['o3']);
    const unfiltered = await readJson<ModelList>(
      await fetch(`${t!.url}/v1/models`, {
        headers: { 'x-svc-routing-policy': policy({ allowedModels: ['o3'] }) },
      }),
    );
    expect(unfiltered.data.length).toBeGreaterThan(1);
  });
});
