/**
 * Responses API state across sellers (docs/decisions/173-responses-state-kept-by-the-buyer.md):
 * what each seller receives for `previous_response_id` and `item_reference`, and what the client
 * gets for ids the buyer does not hold.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { jsonReply, type SellerCall, sseReply } from './testing/memoryNetwork.js';
import { type ErrorBody, readJson } from './testing/readJson.js';
import { chatChunk, chatCompletion } from './testing/sellerReplies.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

type Json = Record<string, unknown>;
const free = { inputUsdPerMillion: 0, outputUsdPerMillion: 0 };
let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

let counter = 0;

/** A responses-format seller's answer: one message item; `stored` says whether it kept it. */
function responsesReply(call: SellerCall, text: string, stored: boolean) {
  counter++;
  const response = {
    id: `resp_seller${counter}`,
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    model: call.json.model,
    store: stored,
    output: [
      {
        type: 'message',
        id: `msg_seller${counter}`,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text, annotations: [] }],
      },
    ],
    usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
  };
  if (call.json.stream !== true) return jsonReply(200, response);
  const event = (type: string, body: Json) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
  return sseReply([
    event('response.created', { response: { ...response, status: 'in_progress', output: [] } }),
    event('response.output_text.delta', { item_id: `msg_seller${counter}`, delta: text }),
    event('response.completed', { response }),
  ]);
}

/** A chat seller answering a tool call with some text beside it (as models often do). */
function chatToolCall(call: SellerCall) {
  const toolCall = { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } };
  if (call.json.stream === true) {
    return sseReply([
      chatChunk({ role: 'assistant', content: 'Let me look.' }),
      chatChunk({ tool_calls: [{ index: 0, ...toolCall }] }),
      chatChunk({}, 'tool_calls'),
      'data: [DONE]\n\n',
    ]);
  }
  return jsonReply(200, {
    id: 'chatcmpl-t',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: call.json.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [toolCall],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}

async function post(body: Json, headers: Record<string, string> = {}) {
  return fetch(`${t!.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'm', ...body }),
  });
}

async function postJson(body: Json, headers: Record<string, string> = {}): Promise<Json> {
  const res = await post(body, headers);
  expect(res.status, await res.clone().text()).toBe(200);
  return readJson<Json>(res);
}

/** The final response object of a responses stream the client received. */
async function streamed(body: Json): Promise<Json> {
  const res = await post({ ...body, stream: true });
  expect(res.status).toBe(200);
  const text = await res.text();
  const completed = text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as Json)
    .find((event) => event.type === 'response.completed');
  expect(completed, text).toBeDefined();
  return completed!.response as Json;
}

function roles(messages: unknown): string[] {
  return (messages as Json[]).map((m) => String(m.role));
}

describe('previous_response_id', () => {
  it('is expanded into the whole conversation for a chat-completions seller', async () => {
    t = await startTestBuyer();
    const chat = t.network.addSeller(
      { peerId: 'chat', services: [{ id: 'm', pricing: free }] },
      (call) =>
        chatCompletion(call, `answer ${call.json.messages ? roles(call.json.messages).length : 0}`),
    );
    const first = await postJson({ input: 'first question', instructions: 'be brief' });
    const second = await postJson({
      input: 'second question',
      previous_response_id: first.id,
      instructions: 'be kind',
    });
    const third = await postJson({ input: 'third question', previous_response_id: second.id });
    expect(third.status).toBe('completed');
    const calls = t.network.callsTo(chat);
    expect(calls).toHaveLength(3);
    const last = calls[2]!.json;
    expect(last.previous_response_id).toBeUndefined();
    // Earlier instructions are not carried over (as with the vendor); the turns are.
    expect(last.messages).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'answer 2' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'answer 4' },
      { role: 'user', content: 'third question' },
    ]);
    expect(JSON.stringify(calls[1]!.json.messages)).toContain('be kind');
  });

  it('passes through to the responses seller that holds it, and is expanded once it is gone', async () => {
    t = await startTestBuyer({ config: {} });
    const holder = t.network.addSeller(
      { peerId: 'holder', services: [{ id: 'm', pricing: free, protocols: ['openai-responses'] }] },
      (call) => responsesReply(call, 'from holder', true),
    );
    const first = await postJson({ input: 'hello' });
    const body = { input: [{ role: 'user', content: 'more' }], previous_response_id: first.id };
    const second = await postJson(body);
    expect(t.network.callsTo(holder).at(-1)!.json).toEqual({ model: 'm', ...body });

    const other = t.network.addSeller(
      { peerId: 'other', services: [{ id: 'm', pricing: free, protocols: ['openai-responses'] }] },
      (call) => responsesReply(call, 'from other', true),
    );
    t.network.setReachable(holder, false);
    const third = await post({ input: 'and now?', previous_response_id: second.id });
    expect(third.status).toBe(200);
    expect(third.headers.get('x-svc-peer-id')).toBe(other);
    const received = t.network.callsTo(other).at(-1)!.json;
    expect(received.previous_response_id).toBeUndefined();
    expect(received.input).toEqual([
      { role: 'user', content: 'hello' },
      (first.output as Json[])[0],
      { role: 'user', content: 'more' },
      (second.output as Json[])[0],
      { role: 'user', content: 'and now?' },
    ]);
  });

  it('is expanded for the same responses seller when it did not store the response', async () => {
    t = await startTestBuyer();
    const seller = t.network.addSeller(
      { peerId: 'r', services: [{ id: 'm', pricing: free, protocols: ['openai-responses'] }] },
      (call) => responsesReply(call, 'stateless', false),
    );
    const first = await streamed({ input: 'hello' });
    await postJson({ input: 'again', previous_response_id: first.id });
    const received = t.network.callsTo(seller).at(-1)!.json;
    expect(received.previous_response_id).toBeUndefined();
    expect((received.input as Json[]).map((item) => item.role)).toEqual([
      'user',
      'assistant',
      'user',
    ]);
  });

  it('answers 400 previous_response_not_found naming an unknown id, and calls no seller', async () => {
    t = await startTestBuyer();
    t.network.addSeller({ peerId: 'chat', services: [{ id: 'm', pricing: free }] }, (call) =>
      chatCompletion(call, 'x'),
    );
    const res = await post({ input: 'hi', previous_response_id: 'resp_nope' });
    expect(res.status).toBe(400);
    const body = await readJson<ErrorBody & { error: { param: string } }>(res);
    expect(body.error.code).toBe('previous_response_not_found');
    expect(body.error.param).toBe('previous_response_id');
    expect(body.error.message).toContain("'resp_nope'");
    expect(t.network.calls).toHaveLength(0);
  });

  it('refuses with 413 to expand a conversation larger than buyer.bodyLimitBytes', async () => {
    t = await startTestBuyer({ config: { bodyLimitBytes: 3_000 } });
    const chat = t.network.addSeller(
      { peerId: 'chat', services: [{ id: 'm', pricing: free }] },
      (call) => chatCompletion(call, 'ok'),
    );
    const first = await postJson({ input: 'a'.repeat(2_000) });
    t.buyer.service.responses.flush(); // written, with its size
    const second = await postJson({ input: 'b'.repeat(1_000), previous_response_id: first.id });
    t.buyer.service.responses.flush();
    const third = await post({ input: 'c', previous_response_id: second.id });
    expect(third.status).toBe(413);
    const body = await readJson<ErrorBody>(third);
    expect(body.error.code).toBe('body_too_large');
    expect(body.error.message).toContain('buyer.bodyLimitBytes');
    expect(t.network.callsTo(chat)).toHaveLength(2);
  });

  it('keeps responses per identity: another identity cannot continue them', async () => {
    t = await startTestBuyer();
    t.network.addSeller({ peerId: 'chat', services: [{ id: 'm', pricing: free }] }, (call) =>
      chatCompletion(call, 'x'),
    );
    const mine = await postJson({ input: 'hi' }, { 'x-svc-buyer-identity': 'team-a' });
    const own = await post(
      { input: 'more', previous_response_id: mine.id },
      { 'x-svc-buyer-identity': 'team-a' },
    );
    expect(own.status).toBe(200);
    const theirs = await post({ input: 'more', previous_response_id: mine.id });
    expect(theirs.status).toBe(400);
    expect((await readJson<ErrorBody>(theirs)).error.code).toBe('previous_response_not_found');
  });

  it('does not keep a response asked with store: false (Codex), and serves it translated', async () => {
    t = await startTestBuyer();
    const chat = t.network.addSeller(
      { peerId: 'chat', services: [{ id: 'm', pricing: free }] },
      (call) => chatCompletion(call, 'x'),
    );
    const codex = {
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [],
          encrypted_content: 'gAAAA-opaque',
        },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go on' }] },
      ],
      store: false,
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'low', summary: 'auto' },
    };
    const answer = await postJson(codex);
    expect(answer.status).toBe('completed');
    expect(t.network.callsTo(chat)).toHaveLength(1);
    const followUp = await post({ input: 'next', previous_response_id: answer.id });
    expect(followUp.status).toBe(400);
  });
});

describe('item_reference', () => {
  it('resolves the items of an earlier answer for a chat seller (the AI SDK tool loop)', async () => {
    t = await startTestBuyer();
    const chat = t.network.addSeller(
      { peerId: 'chat', services: [{ id: 'm', pricing: free }] },
      (call) =>
        (call.json.messages as Json[]).some((m) => m.role === 'tool')
          ? chatCompletion(call, 'done')
          : chatToolCall(call),
    );
    const tools = [
      { type: 'function', name: 'read', parameters: { type: 'object', properties: {} } },
    ];
    for (const stream of [false, true]) {
      const first = stream
        ? await streamed({ input: 'read a.txt', tools })
        : await postJson({ input: 'read a.txt', tools });
      const output = first.output as Json[];
      const message = output.find((item) => item.type === 'message')!;
      const call = output.find((item) => item.type === 'function_call')!;
      const second = await postJson({
        tools,
        input: [
          { role: 'user', content: 'read a.txt' },
          { type: 'item_reference', id: message.id },
          { type: 'function_call', call_id: call.call_id, name: 'read', arguments: call.arguments },
          { type: 'function_call_output', call_id: call.call_id, output: 'file text' },
        ],
      });
      expect(second.status).toBe('completed');
      const received = t.network.callsTo(chat).at(-1)!.json.messages as Json[];
      expect(roles(received)).toEqual(['user', 'assistant', 'tool']);
      expect(received[1]!.content).toBe('Let me look.');
    }
  });

  it('refuses more than 4,096 item references in one request, calling no seller', async () => {
    t = await startTestBuyer();
    t.network.addSeller({ peerId: 'chat', services: [{ id: 'm', pricing: free }] }, (call) =>
      chatCompletion(call, 'x'),
    );
    const first = await postJson({ input: 'hi' });
    const id = (first.output as Json[])[0]!.id;
    const references = Array.from({ length: 4_097 }, () => ({ type: 'item_reference', id }));
    const res = await post({ input: [{ role: 'user', content: 'hi' }, ...references] });
    expect(res.status).toBe(400);
    expect((await readJson<ErrorBody>(res)).error.message).toContain('item_reference');
    expect(t.network.calls).toHaveLength(1);
  });

  it('answers 400 invalid_request for ids that are not strings', async () => {
    t = await startTestBuyer();
    t.network.addSeller({ peerId: 'chat', services: [{ id: 'm', pricing: free }] }, (call) =>
      chatCompletion(call, 'x'),
    );
    const cases: Array<[Json, string]> = [
      [{ input: 'hi', previous_response_id: 42 }, 'previous_response_id'],
      [{ input: [{ type: 'item_reference', id: 7 }] }, 'input[0].id'],
    ];
    for (const [body, param] of cases) {
      const res = await post(body);
      expect(res.status).toBe(400);
      const error = (await readJson<ErrorBody & { error: { param: string } }>(res)).error;
      expect(error.code).toBe('invalid_request');
      expect(error.param).toBe(param);
    }
    expect(t.network.calls).toHaveLength(0);
  });

  it('answers 400 response_item_not_found naming an unknown item id', async () => {
    t = await startTestBuyer();
    t.network.addSeller({ peerId: 'chat', services: [{ id: 'm', pricing: free }] }, (call) =>
      chatCompletion(call, 'x'),
    );
    const res = await post({
      input: [
        { role: 'user', content: 'hi' },
        { type: 'item_reference', id: 'msg_gone' },
      ],
    });
    expect(res.status).toBe(400);
    const body = await readJson<ErrorBody & { error: { param: string } }>(res);
    expect(body.error.code).toBe('response_item_not_found');
    expect(body.error.param).toBe('input[1].id');
    expect(body.error.message).toContain("'msg_gone'");
    expect(t.network.calls).toHaveLength(0);
  });
});
