/**
 * The official `openai` and `@anthropic-ai/sdk` clients pointed at a loopback server that replays
 * a set answer, for the SDK tests of this folder (src/formats/sdk.test.ts, sdkStreams.test.ts).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import type { SseEvent } from '../sse.js';

/** What the tests need of the fake vendor (src/seller/testing's fake upstream is one). */
export interface ReplayServer<Replay> {
  url: string;
  requests: ReadonlyArray<{ body: unknown }>;
  configure(options: { replay: Replay }): void;
  close(): Promise<void>;
}

export interface SdkClients<Replay> {
  server: ReplayServer<Replay>;
  openai: OpenAI;
  anthropic: Anthropic;
  /** The answer the vendor gives to the next requests. */
  replay(answer: Replay): void;
}

/** Starts the server and both clients before the file's tests, and stops the server after. */
export function sdkClients<Replay>(start: () => Promise<ReplayServer<Replay>>): SdkClients<Replay> {
  const sdk = {
    replay: (answer: Replay) => sdk.server.configure({ replay: answer }),
  } as SdkClients<Replay>;
  beforeAll(async () => {
    sdk.server = await start();
    sdk.openai = new OpenAI({ baseURL: `${sdk.server.url}/v1`, apiKey: 'test', maxRetries: 0 });
    sdk.anthropic = new Anthropic({ baseURL: sdk.server.url, apiKey: 'test', maxRetries: 0 });
  });
  afterAll(async () => {
    await sdk.server?.close();
  });
  return sdk;
}

export async function collect(events: AsyncIterable<SseEvent>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** The one tool every SDK test offers, in the neutral shape each format's request maps. */
export const tools = [
  {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];

/** The text of a streamed Anthropic message: its text deltas, joined. */
export async function messageText(
  stream: AsyncIterable<Anthropic.RawMessageStreamEvent>,
): Promise<string> {
  let text = '';
  for await (const event of stream) {
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
      text += event.delta.text;
  }
  return text;
}
