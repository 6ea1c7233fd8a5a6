import { afterEach, describe, expect, it } from 'vitest';
import type { ApiProtocol } from '../network/index.js';
import type { BuyerPayments, CompleteInput } from './payments.js';
import { jsonReply, type SellerScript, sseReply } from './testing/memoryNetwork.js';
import { chatChunk } from './testing/sellerReplies.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

/** Nothing is paid for a failed answer (docs/decisions/152-nothing-paid-for-failed-answers.md). */
let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

/** Records what the buyer would sign: `completed` signs a voucher, `released` signs nothing. */
function spyPayments() {
  const completed: CompleteInput[] = [];
  const released: string[] = [];
  const payments: BuyerPayments = {
    prepare: async () => ({ kind: 'test-payment' }),
    complete: async (input) => {
      completed.push(input);
    },
    release: (requestId) => {
      released.push(requestId);
    },
  };
  return { payments, completed, released };
}

const chunk = chatChunk;

/** A whole chat answer with no output: 50 input tokens, `finish` as its finish reason. */
function emptyAnswer(finish: string | null) {
  return jsonReply(200, {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: finish }],
    usage: { prompt_tokens: 50, completion_tokens: 0, total_tokens: 50 },
  });
}

async function buyerWith(script: SellerScript, protocol: ApiProtocol = 'openai-chat-completions') {
  const spy = spyPayments();
  t = await startTestBuyer({ payments: spy.payments });
  t.network.addSeller(
    {
      peerId: 'seller',
      services: [
        {
          id: protocol === 'anthropic-messages' ? 'claude' : 'm',
          protocols: [protocol],
          pricing: { inputUsdPerMillion: 10, outputUsdPerMillion: 10 },
        },
      ],
    },
    script,
  );
  return spy;
}

function post(stream: boolean) {
  return fetch(`${t!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream, messages: [{ role: 'user', content: 'hello' }] }),
  });
}

/** The cost in a stream's closing `: svc-usage` comment. */
function streamCost(text: string): string {
  const line = text.trimEnd().split('\n').at(-1)!;
  return (JSON.parse(line.slice(': svc-usage '.length)) as { costUsd: string }).costUsd;
}

describe('failed answers cost nothing', () => {
  it('an answer with no output tokens and no finish reason: no voucher, cost 0', async () => {
    const spy = await buyerWith(() => emptyAnswer(null));
    const response = await post(false);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe('0.000000');
    await expect.poll(() => spy.released.length).toBe(1);
    expect(spy.completed).toEqual([]);
  });

  it('an empty answer that did finish (finish_reason "stop") is still paid for its input', async () => {
    const spy = await buyerWith(() => emptyAnswer('stop'));
    const response = await post(false);
    await response.arrayBuffer();
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe('0.000500');
    await expect.poll(() => spy.completed.length).toBe(1);
  });

  it('a stream that failed before any content: an error before the head, no voucher', async () => {
    const spy = await buyerWith((call) =>
      sseReply(
        [chunk({ role: 'assistant', content: '' }), 'data: {"error":{"message":"boom"}}\n\n'],
        {
          signal: call.signal,
        },
      ),
    );
    const response = await post(true);
    // Nothing reached the client: the seller's error event is its answer, as an error status.
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/error event before any content: boom/);
    expect(response.headers.get('x-svc-attempts')).toMatch(/@m:error_event$/);
    await expect.poll(() => spy.released.length).toBe(1);
    expect(spy.completed).toEqual([]);
  });

  it('a stream cut in its preamble pays nothing, though its preamble reported output tokens', async () => {
    const spy = await buyerWith(
      (call) =>
        sseReply(
          [
            'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":50,"output_tokens":1}}}\n\n',
            'event: ping\ndata: {"type":"ping"}\n\n',
          ],
          { signal: call.signal },
        ),
      'anthropic-messages',
    );
    const response = await fetch(`${t!.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude',
        max_tokens: 10,
        stream: true,
        messages: [{ role: 'user', content: 'hello' }],
      }),
    });
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe('api_error');
    await expect.poll(() => spy.released.length).toBe(1);
    expect(spy.completed).toEqual([]);
  });

  it('a stream cut after some content still pays for what was delivered', async () => {
    const spy = await buyerWith((call) =>
      sseReply([chunk({ role: 'assistant', content: '' }), chunk({ content: 'partial answer' })], {
        signal: call.signal,
      }),
    );
    const response = await post(true);
    expect(streamCost(await response.text())).not.toBe('0.000000');
    await expect.poll(() => spy.completed.length).toBe(1);
    expect(spy.completed[0]!.estimatedUsage.outputTokens).toBeGreaterThan(0);
    expect(spy.released).toEqual([]);
  });
});
