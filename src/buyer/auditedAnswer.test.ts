/**
 * What the buyer tells its auditor of a delivered answer (docs/decisions/221-audits-of-real-answers.md):
 * with `buyer.audit.realAnswers` off, the answer is never offered; on, it is offered lazily, as
 * the seller sent it (a whole body, or a stream's events).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveredAnswer, DeliveredBody } from '../audit/index.js';
import { jsonReply, sseReply } from './testing/memoryNetwork.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const PRICING = { inputUsdPerMillion: 2, outputUsdPerMillion: 10 };
const CHAT = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-x',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'Hello there.' }, finish_reason: 'stop' },
  ],
  usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
};
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const STREAM = [
  chunk({ role: 'assistant', content: 'Hello' }),
  chunk({ content: ' there.' }),
  chunk({}, 'stop'),
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [], usage: CHAT.usage })}\n\n`,
  'data: [DONE]\n\n',
];

/** A buyer with one chat seller; every note its auditor receives. */
async function buyerWith(realAnswers: boolean) {
  t = await startTestBuyer({
    payments: 'unpaid-dev',
    config: { audit: { realAnswers, sampleRate: 0 } },
  });
  const peerId = t.network.addSeller(
    {
      peerId: 'gpt',
      services: [{ id: 'gpt-x', pricing: PRICING, protocols: ['openai-chat-completions'] }],
    },
    (call) => (call.json.stream === true ? sseReply(STREAM) : jsonReply(200, CHAT)),
  );
  const notes: DeliveredAnswer[] = [];
  const { audits } = t.buyer.service;
  const noteAnswer = audits.noteAnswer.bind(audits);
  audits.noteAnswer = (answer) => {
    notes.push(answer);
    noteAnswer(answer);
  };
  const url = t.url;
  const ask = async (stream: boolean, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], stream }),
    });
    expect(response.status).toBe(200);
    await response.text();
  };
  return { notes, ask, peerId };
}

describe('the delivered answer offered to audits', () => {
  it('is not offered while audits of real answers are off', async () => {
    const { notes, ask } = await buyerWith(false);
    await ask(false);
    await ask(true);
    expect(notes).toHaveLength(2);
    for (const note of notes) {
      expect(note.request).toBeDefined();
      expect(note.answer).toBeUndefined();
    }
  });

  it('is offered as the seller sent it while they are on: a whole body, or a stream’s events', async () => {
    const { notes, ask } = await buyerWith(true);
    await ask(false);
    await ask(true);
    expect(notes).toHaveLength(2);
    const whole = notes[0]!.answer!() as DeliveredBody;
    expect(whole.sellerProtocol).toBe('openai-chat-completions');
    expect(JSON.parse(Buffer.from(whole.body!).toString())).toEqual(CHAT);
    const streamed = notes[1]!.answer!() as DeliveredBody;
    expect(streamed.body).toBeUndefined();
    const contents = streamed.events!.map(
      (data: string) =>
        (JSON.parse(data) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta
          ?.content ?? '',
    );
    expect(contents.join('')).toBe('Hello there.');
  });

  it('is withheld when the request chose its own sellers: its content goes to no reference', async () => {
    const { notes, ask, peerId } = await buyerWith(true);
    await ask(false, { 'x-svc-pin-peer': `0x${peerId}` });
    expect(notes).toHaveLength(1);
    expect(notes[0]!.answer!()).toBe('the request pinned its seller');
  });
});
