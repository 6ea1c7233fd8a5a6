/**
 * Responses API state across sellers on a real network, driven by the official `openai` SDK
 * (docs/decisions/173-responses-state-kept-by-the-buyer.md): a `previous_response_id` follow-up
 * is served with the whole conversation after the seller that answered the first turn is stopped,
 * by a seller of another format. Both sellers answer with the demo model behind a stand-in vendor
 * that records what it receives; nothing here depends on the demo's answer text.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoVendor, startDemoVendor } from './support/demoVendor.js';
import { type SellerNetwork, startSellerNetwork } from './support/sellerNetwork.js';

type Json = Record<string, unknown>;
const MODEL = 'svc-state';

let responsesVendor: DemoVendor;
let chatVendor: DemoVendor;
let net: SellerNetwork;
let openai: OpenAI;

beforeAll(async () => {
  responsesVendor = await startDemoVendor('openai-responses');
  chatVendor = await startDemoVendor('openai-chat-completions');
  net = await startSellerNetwork([
    {
      provider: 'openai-responses',
      baseUrl: responsesVendor.baseUrl,
      services: { [MODEL]: { upstreamModel: 'svc-demo-smart' } },
    },
    {
      provider: 'openai-chat',
      baseUrl: chatVendor.baseUrl,
      services: { [MODEL]: { upstreamModel: 'svc-demo-smart' } },
    },
  ]);
  openai = new OpenAI({ apiKey: 'placeholder', baseURL: `${net.buyer.url}/v1`, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await net?.stop();
  await responsesVendor?.close();
  await chatVendor?.close();
});

function texts(messages: unknown): string[] {
  return (messages as Json[]).map((m) =>
    typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
  );
}

describe('previous_response_id across sellers', () => {
  it('follows up on the same seller, then on another format once that seller is stopped', async () => {
    const peers = net.sellers.map((seller) => seller.metadata().peerId);
    // The first turn pinned to the responses seller; the follow-ups are routed automatically.
    const first = await openai.responses
      .create({
        model: `${peers[0]}@${MODEL}`,
        input: 'The code word is heron.',
        instructions: 'Answer briefly.',
      })
      .withResponse();
    expect(first.response.headers.get('x-svc-peer-id')).toBe(peers[0]);
    expect(first.data.status).toBe('completed');

    const second = await openai.responses.stream({
      model: MODEL,
      input: 'And the second word is crane.',
      previous_response_id: first.data.id,
    });
    const secondResponse = await second.finalResponse();
    expect(secondResponse.status).toBe('completed');
    // The demo upstream does not store responses (`store: false`): the buyer sent it everything.
    const received = responsesVendor.received.at(-1)!;
    expect(received.previous_response_id).toBeUndefined();
    expect((received.input as Json[]).map((item) => item.role)).toEqual([
      'user',
      'assistant',
      'user',
    ]);

    await net.stopSeller(0);
    const third = await openai.responses
      .create({ model: MODEL, input: 'Which two words?', previous_response_id: secondResponse.id })
      .withResponse();
    expect(third.data.status).toBe('completed');
    expect(third.response.headers.get('x-svc-peer-id')).toBe(peers[1]);
    const translated = chatVendor.received.at(-1)!;
    expect(translated.previous_response_id).toBeUndefined();
    const messages = translated.messages as Json[];
    // Each earlier turn as the client sent and received it; earlier instructions are not carried
    // over (as with the vendor's own previous_response_id).
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(texts(messages)).toEqual([
      'The code word is heron.',
      first.data.output_text,
      'And the second word is crane.',
      secondResponse.output_text,
      'Which two words?',
    ]);
  });

  it('answers an unknown previous_response_id with the SDK error naming it', async () => {
    const failure = await openai.responses
      .create({ model: MODEL, input: 'hi', previous_response_id: 'resp_unknown' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    const error = failure as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error.code).toBe('previous_response_not_found');
    expect(error.param).toBe('previous_response_id');
    expect(error.message).toContain("'resp_unknown'");
  });
});
