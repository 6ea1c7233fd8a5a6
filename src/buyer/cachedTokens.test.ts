import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonReply } from './testing/memoryNetwork.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

/**
 * Cached input tokens are counted alike across formats: svc's input count always includes cache
 * reads (OpenAI's prompt_tokens does; Anthropic's input_tokens does not), so a translated answer
 * carries the same x-svc-* counts and price as an untranslated one.
 */
let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

// 100 uncached + 400 cache-read input tokens, 10 output tokens.
const PRICING = { inputUsdPerMillion: 2, outputUsdPerMillion: 10, cachedInputUsdPerMillion: 0.5 };
// 100 × 2 + 400 × 0.5 + 10 × 10 = 500 micro-USD.
const COST = '0.000500';

describe('cached tokens across formats', () => {
  it('an Anthropic seller behind the chat API: prompt_tokens includes the cache reads', async () => {
    t = await startTestBuyer({ payments: 'unpaid-dev' });
    t.network.addSeller(
      {
        peerId: 'claude',
        services: [{ id: 'claude-x', pricing: PRICING, protocols: ['anthropic-messages'] }],
      },
      (call) =>
        jsonReply(200, {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: call.json.model,
          content: [{ type: 'text', text: 'hi' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 100, cache_read_input_tokens: 400, output_tokens: 10 },
        }),
    );
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.usage).toMatchObject({
      prompt_tokens: 500,
      completion_tokens: 10,
      prompt_tokens_details: { cached_tokens: 400 },
    });
    expect(response.headers.get('x-svc-input-tokens')).toBe('500');
    expect(response.headers.get('x-svc-cached-input-tokens')).toBe('400');
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe(COST);
  });

  it('an OpenAI seller behind the messages API: input_tokens excludes the cache reads', async () => {
    t = await startTestBuyer({ payments: 'unpaid-dev' });
    t.network.addSeller(
      {
        peerId: 'gpt',
        services: [{ id: 'gpt-x', pricing: PRICING, protocols: ['openai-chat-completions'] }],
      },
      (call) =>
        jsonReply(200, {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: call.json.model,
          choices: [
            { index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' },
          ],
          usage: {
            prompt_tokens: 500,
            completion_tokens: 10,
            total_tokens: 510,
            prompt_tokens_details: { cached_tokens: 400 },
          },
        }),
    );
    const client = new Anthropic({ baseURL: t.url, apiKey: 'unused', maxRetries: 0 });
    const { data, response } = await client.messages
      // A cap room enough for the claimed usage: the buyer pays at most input + max_tokens
      // at the seller's price (src/buyer/costCap.ts), and the seller's cache makes the claimed
      // input far larger than this short prompt counts.
      .create({ model: 'gpt-x', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.usage).toMatchObject({
      input_tokens: 100,
      cache_read_input_tokens: 400,
      output_tokens: 10,
    });
    expect(response.headers.get('x-svc-input-tokens')).toBe('500');
    expect(response.headers.get('x-svc-cached-input-tokens')).toBe('400');
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe(COST);
  });
});
