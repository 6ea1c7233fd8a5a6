/**
 * A whole chat answer whose `[DONE]` never came (the seller's stream cut right after its last
 * event, or a seller that omits it) reaches the client ending with `[DONE]`, as a whole answer:
 * the official SDK reads every chunk and no error. A stream cut before its finish still ends with
 * an error event and no `[DONE]` (src/buyer/streamFailures.test.ts has every kind).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSse, type SseEvent } from '../formats/index.js';
import { STREAMS } from '../formats/testing/samples.js';
import type { ScriptedResponse } from './testing/memoryNetwork.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

/** The chat sample's events without `[DONE]`, then a reset (`cut`) or a clean end. */
function withoutDone(cut: boolean): ScriptedResponse {
  const events = STREAMS.chat.text.filter((event) => event.data !== '[DONE]');
  async function* body() {
    for (const event of events) yield formatSse(event as SseEvent);
    if (cut) throw new Error('connection reset by seller');
  }
  return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: body() };
}

let t: TestBuyer;

beforeAll(async () => {
  t = await startTestBuyer({ payments: 'unpaid-dev' });
  for (const cut of [true, false]) {
    t.network.addSeller(
      {
        peerId: cut ? 'cutafterfinish' : 'omitsdone',
        services: [
          { id: cut ? 'cut-model' : 'nodone-model', protocols: ['openai-chat-completions'] },
        ],
      },
      () => withoutDone(cut),
    );
  }
});
afterAll(() => t?.stop());

const ask = (model: string) =>
  fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('a whole chat answer without its [DONE]', () => {
  for (const [model, why] of [
    ['cut-model', 'cut right after its last event'],
    ['nodone-model', 'from a seller that omits it'],
  ] as const) {
    it(`ends with [DONE] and no error: ${why}`, async () => {
      const response = await ask(model);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).not.toMatch(/"error"\s*:/);
      const events = text.split('\n\n').filter((part) => part.startsWith('data: '));
      expect(events.at(-1)).toBe('data: [DONE]');
      expect(text.match(/data: \[DONE\]/g)).toHaveLength(1);

      const openai = new OpenAI({ apiKey: 'x', baseURL: `${t.url}/v1`, maxRetries: 0 });
      let content = '';
      const stream = await openai.chat.completions.create({
        model,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      });
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
      expect(content.length).toBeGreaterThan(0);
    });
  }
});
