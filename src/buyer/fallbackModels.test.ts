import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type ErrorBody, readJson } from './testing/readJson.js';
import { chatCompletion } from './testing/sellerReplies.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

async function buyer() {
  t = await startTestBuyer({ payments: 'unpaid-dev' });
  const cheap = t.network.addSeller(
    {
      peerId: 'cheap',
      services: [{ id: 'small-model', pricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 2 } }],
    },
    (call) => chatCompletion(call, 'from small', { prompt: 1_000, completion: 1_000 }),
  );
  const broken = t.network.addSeller(
    {
      peerId: 'broken',
      services: [{ id: 'mid-model', pricing: { inputUsdPerMillion: 5, outputUsdPerMillion: 5 } }],
    },
    () => ({ status: 503, body: '{"error":{"message":"down"}}' }),
  );
  return { cheap, broken };
}

function post(body: Record<string, unknown>) {
  return fetch(`${t!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

describe('model fallback lists', () => {
  it('serves from the second model when the first has no seller, billed at its price', async () => {
    const { cheap } = await buyer();
    const response = await post({ models: ['no-such-model', 'small-model'] });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-model')).toBe('small-model');
    expect(response.headers.get('x-svc-peer-id')).toBe(cheap);
    // 1,000 tokens in at 1 USD/M and 1,000 out at 2 USD/M.
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe('0.003000');
    await response.arrayBuffer();
    const requestId = response.headers.get('x-svc-request-id')!;
    const record = await readJson<{ model: string; serviceId: string }>(
      await fetch(`${t!.url}/_svc/requests/${requestId}`),
    );
    expect(record).toMatchObject({ model: 'small-model', serviceId: 'small-model' });
    // The seller got its own model name and no list.
    const call = t!.network.calls.at(-1)!.json;
    expect(call.model).toBe('small-model');
    expect('models' in call).toBe(false);
  });

  it('moves on to the next model when every seller of one fails, `model` first', async () => {
    const { broken, cheap } = await buyer();
    const response = await post({ model: 'mid-model', models: ['small-model'] });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-model')).toBe('small-model');
    expect(response.headers.get('x-svc-attempts')).toContain(`${broken}@mid-model`);
    expect(response.headers.get('x-svc-peer-id')).toBe(cheap);
  });

  it('works on the messages route through the Anthropic SDK', async () => {
    await buyer();
    const client = new Anthropic({ baseURL: t!.url, apiKey: 'unused', maxRetries: 0 });
    const { data, response } = await client.messages
      .create({
        model: 'no-such-model',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
        // @ts-expect-error: svc's fallback list is not in the SDK's types
        models: ['small-model'],
      })
      .withResponse();
    expect(response.headers.get('x-svc-model')).toBe('small-model');
    expect(data.content[0]).toMatchObject({ type: 'text', text: 'from small' });
  });

  it('fails with the first model’s error when no model can be routed, 400 for a bad list', async () => {
    await buyer();
    const none = await post({ models: ['no-such-model', 'also-missing'] });
    expect(none.status).toBe(502);
    const body = await readJson<ErrorBody>(none);
    expect(body.error.code).toBe('model_not_found');
    expect(body.error.message).toContain('no-such-model');
    for (const models of [[], 'small-model', [1], Array(9).fill('small-model')]) {
      const bad = await post({ models });
      expect(bad.status).toBe(400);
      await bad.arrayBuffer();
    }
  });
});
