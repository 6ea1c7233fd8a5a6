/**
 * A seller that dies after the first byte of a stream: through the gateway and the buyer, each
 * official SDK raises an error (never a normal end), in every client format, translated or
 * passed through, with the buyer in the gateway's process or behind HTTP; the gateway logs the
 * request failed and charges the delivered part once.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSse, type SseEvent } from '../formats/index.js';
import { STREAMS } from '../formats/testing/samples.js';
import { controlSecretPath } from '../gateway/server/controlSecret.js';
import { type Harness, startHarness } from '../gateway/testing/harness.js';
import type { ApiProtocol } from '../network/index.js';
import { waitFor } from '../testing/index.js';
import { inProcessBuyer } from './inProcess.js';
import type { ScriptedResponse } from './testing/memoryNetwork.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

type Format = 'chat' | 'responses' | 'messages';

const PROTOCOL: Record<Format, ApiProtocol> = {
  chat: 'openai-chat-completions',
  responses: 'openai-responses',
  messages: 'anthropic-messages',
};
/** One seller per format, each speaking only its own. */
const MODEL: Record<Format, string> = {
  chat: 'gpt-4o',
  responses: 'gpt-4.1',
  messages: 'claude-sonnet-4',
};
/** Events sent before the seller dies: the answer has started, its final event never comes. */
const SENT_BEFORE_DEATH: Record<Format, number> = { chat: 2, responses: 5, messages: 4 };

/** The seller's first events, then a reset. */
function dying(format: Format): ScriptedResponse {
  const events = STREAMS[format].text.slice(0, SENT_BEFORE_DEATH[format]);
  async function* body() {
    for (const event of events) yield formatSse(event as SseEvent);
    throw new Error('connection reset by seller');
  }
  return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: body() };
}

let t: TestBuyer;
/** The gateway forwarding to the buyer over HTTP, and one calling it in process. */
let h: Harness;
let hi: Harness;

beforeAll(async () => {
  t = await startTestBuyer({ payments: 'unpaid-dev' });
  for (const format of Object.keys(MODEL) as Format[]) {
    t.network.addSeller(
      {
        peerId: `${format}only`,
        services: [
          {
            id: MODEL[format],
            protocols: [PROTOCOL[format]],
            pricing: { inputUsdPerMillion: 100, outputUsdPerMillion: 100 },
          },
        ],
      },
      () => dying(format),
    );
  }
  h = await startHarness({ gateway: { buyerUrl: t.url } });
  hi = await startHarness({
    buyerInProcess: { url: t.url, inProcess: inProcessBuyer(t.buyer.service) },
  });
  // The buyer honours the gateway's request id only with the gateway's control secret.
  mkdirSync(join(t.dataDir, 'gateway'), { recursive: true });
  copyFileSync(controlSecretPath(h.dataDir), controlSecretPath(t.dataDir));
});
afterAll(async () => {
  await h?.stop();
  await hi?.stop();
  await t?.stop();
});

async function ask(via: Harness, client: Format, model: string, secret: string): Promise<void> {
  if (client === 'messages') {
    const anthropic = new Anthropic({ authToken: secret, baseURL: via.gateway.url, maxRetries: 0 });
    const stream = await anthropic.messages.create({
      model,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    for await (const _ of stream) void _;
    return;
  }
  const openai = new OpenAI({ apiKey: secret, baseURL: `${via.gateway.url}/v1`, maxRetries: 0 });
  if (client === 'chat') {
    const stream = await openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    for await (const _ of stream) void _;
    return;
  }
  const stream = await openai.responses.create({ model, input: 'Hi', stream: true });
  for await (const _ of stream) void _;
}

const CASES = (['chat', 'responses', 'messages'] as Format[]).flatMap((client) =>
  (['chat', 'responses', 'messages'] as Format[])
    .filter((seller) => seller === client || seller === (client === 'chat' ? 'messages' : 'chat'))
    .flatMap((seller) =>
      (['remote', 'in process'] as const).map((buyer) => ({
        client,
        seller,
        translated: client !== seller,
        buyer,
      })),
    ),
);

describe('a seller dying mid-stream', () => {
  it.each(CASES)(
    '$client client, $seller seller (translated: $translated), buyer $buyer: the SDK raises, the gateway logs a failure and charges once',
    async ({ client, seller, buyer }) => {
      const gateway = buyer === 'remote' ? h : hi;
      const { key, secret } = await gateway.key({ limits: { daily: 1_000_000n } });
      await expect(ask(gateway, client, MODEL[seller], secret)).rejects.toThrow(
        /failed mid-stream/,
      );
      const rows = await waitFor(async () => {
        const all = await gateway.store.queryLogs({ keyId: key.id });
        return all.length === 1 && all[0]?.costMicro !== undefined && all;
      });
      expect(rows[0]).toMatchObject({ status: 502, errorCode: 'seller_error', streamed: true });
      const charged = rows[0]!.costMicro;
      expect(charged).toBeGreaterThan(0n);
      expect(await gateway.store.ledgerTotal(key.id)).toBe(charged);
      const record = t.buyer.service.records.get(rows[0]!.requestId!);
      expect(record).toMatchObject({ completed: false, errorCode: 'seller_error', status: 502 });
      expect(record?.costUsd).not.toBe('0.000000');
    },
  );
});

describe('every kind of mid-stream failure', () => {
  const start = STREAMS.chat.text.slice(0, 2).map((event) => formatSse(event as SseEvent));
  const endings: Record<string, () => AsyncIterable<string>> = {
    'a malformed event': async function* () {
      yield* start;
      yield 'data: {"choices": [\n\n';
    },
    'an end without the final event': async function* () {
      yield* start;
    },
    'a reset': async function* () {
      yield* start;
      throw new Error('connection reset by seller');
    },
  };

  it.each(Object.keys(endings))(
    'a chat stream cut by %s ends with an error event, no [DONE], and a failed usage comment',
    async (ending) => {
      t.network.addSeller(
        {
          peerId: 'cutter',
          services: [{ id: 'cut-model', protocols: ['openai-chat-completions'] }],
        },
        () => ({
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: endings[ending]!(),
        }),
      );
      const openai = new OpenAI({ apiKey: 'x', baseURL: `${t.url}/v1`, maxRetries: 0 });
      const stream = await openai.chat.completions.create({
        model: 'cut-model',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      });
      const consume = async () => {
        for await (const _ of stream) void _;
      };
      await expect(consume()).rejects.toThrow();
      const raw = await fetch(`${t.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'cut-model',
          stream: true,
          messages: [{ role: 'user', content: 'Hi' }],
        }),
      });
      const text = await raw.text();
      expect(text).toMatch(/\ndata: \{"error":\{"message":"Seller [^"]+"/);
      expect(text).not.toContain('[DONE]');
      expect(text).toMatch(/: svc-usage \{[^\n]*"errorCode":"[a-z_]+"\}\n\n$/);
    },
  );
});
