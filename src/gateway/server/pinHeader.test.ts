/**
 * Pinning through the gateway with `x-svc-pin-peer` (spec 4.5; the only way to pin a multipart
 * image edit): the header reaches the buyer when the key's policy allows that seller (allow and
 * block lists) and the pinned model (the model allow-list); otherwise 403 `model_not_allowed`
 * and nothing is forwarded. A malformed pin is 400 `invalid_request`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';
import { STUB_PEER_ID } from '../testing/stubBuyer.js';

const OTHER_PEER = 'cd'.repeat(20);
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ buyer: { costUsd: '0.000300' } });
});
afterAll(() => h.stop());

const chat = (secret: string, pin: string, model = 'model-a') =>
  h.call('/v1/chat/completions', {
    secret,
    method: 'POST',
    headers: { 'x-svc-pin-peer': pin },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
const forwarded = () => h.buyer.received.filter((r) => r.path !== '/v1/models').length;
const pinSeen = (path: string) =>
  h.buyer.received.filter((r) => r.path === path).at(-1)?.headers['x-svc-pin-peer'];

describe('x-svc-pin-peer through the gateway', () => {
  it('forwards the pin of a key whose policy allows the seller and the model', async () => {
    const { secret } = await h.key();
    expect((await chat(secret, `0x${STUB_PEER_ID.toUpperCase()}`)).status).toBe(200);
    expect(pinSeen('/v1/chat/completions')).toBe(`0x${STUB_PEER_ID.toUpperCase()}`);
    const allowed = await h.key({ models: ['model-a'] });
    await h.store.setKeyPolicy(allowed.key.id, { allowedPeerIds: [STUB_PEER_ID] });
    expect((await chat(allowed.secret, `${STUB_PEER_ID}@model-a`)).status).toBe(200);
    expect(pinSeen('/v1/chat/completions')).toBe(`${STUB_PEER_ID}@model-a`);
  });

  it('pins a multipart image edit', async () => {
    const { secret } = await h.key();
    const form = new FormData();
    form.set('model', 'model-a');
    form.set('prompt', 'make it blue');
    form.set(
      'image',
      new Blob([new Uint8Array([137, 80, 78, 71])], { type: 'image/png' }),
      'a.png',
    );
    const response = await fetch(`${h.gateway.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'x-svc-pin-peer': STUB_PEER_ID },
      body: form,
    });
    expect(response.status).toBe(200);
    expect(pinSeen('/v1/images/edits')).toBe(STUB_PEER_ID);
  });

  it('refuses a pin outside the policy with 403 model_not_allowed, forwarding nothing', async () => {
    const blocked = await h.key();
    await h.store.setKeyPolicy(blocked.key.id, { blockedPeerIds: [STUB_PEER_ID] });
    const notListed = await h.key();
    await h.store.setKeyPolicy(notListed.key.id, { allowedPeerIds: [OTHER_PEER] });
    const otherModel = await h.key({ models: ['model-b'] });
    const before = forwarded();
    for (const [secret, pin, model] of [
      [blocked.secret, STUB_PEER_ID, 'model-a'],
      [notListed.secret, STUB_PEER_ID, 'model-a'],
      // The header's model is the one pinned, whatever the body names.
      [otherModel.secret, `${STUB_PEER_ID}@model-a`, 'model-b'],
    ] as const) {
      const response = await chat(secret, pin, model);
      expect(response.status).toBe(403);
      const body = await jsonOf(response);
      expect(body.error.code).toBe('model_not_allowed');
    }
    expect(forwarded()).toBe(before);
  });

  it('refuses a malformed pin with 400 invalid_request', async () => {
    const { secret } = await h.key();
    const response = await chat(secret, 'not-a-peer');
    expect(response.status).toBe(400);
    expect((await jsonOf(response)).error.code).toBe('invalid_request');
  });
});
