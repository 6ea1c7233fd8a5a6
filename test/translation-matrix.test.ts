/**
 * The translation matrix: every client format, driven by its official SDK, against a
 * seller of every format on a real libp2p network, streaming and not — plain text, a tool-call
 * round trip, an image input, the stop reason and usage with cached tokens. The vendors behind
 * the sellers answer in their exact wire formats (test/support/scriptedVendor.ts).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiFormat } from '../src/formats/index.js';
import {
  hasToolResult,
  type ScriptedVendor,
  startScriptedVendor,
} from './support/scriptedVendor.js';
import {
  type SellerNetwork,
  type SellerProvider,
  startSellerNetwork,
} from './support/sellerNetwork.js';

type Json = Record<string, unknown>;
const FORMATS: ApiFormat[] = ['chat', 'responses', 'messages'];
const PROVIDER: Record<ApiFormat, SellerProvider> = {
  chat: 'openai-chat',
  responses: 'openai-responses',
  messages: 'anthropic-messages',
};
const PNG_B64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const QUESTION = 'What is the weather in Paris?';
const TOOL_RESULT = '18 C and sunny';
const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

/** What every client sees, whatever its format. */
interface Answer {
  text: string;
  toolCall?: { id: string; name: string; args: unknown };
  stop: string;
  usage: { input: number; cached: number; output: number };
}

interface Turn {
  model: string;
  stream: boolean;
  tools?: boolean;
  image?: boolean;
  /** The tool call being answered (second turn of a round trip). */
  answering?: { id: string; name: string; args: unknown };
}

let net: SellerNetwork;
const vendors = {} as Record<ApiFormat, ScriptedVendor>;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  for (const format of FORMATS) vendors[format] = await startScriptedVendor(format);
  net = await startSellerNetwork(
    FORMATS.map((format) => ({
      provider: PROVIDER[format],
      baseUrl: vendors[format].baseUrl,
      services: { [`matrix-${format}`]: { upstreamModel: `vendor-${format}` } },
    })),
  );
  openai = new OpenAI({ apiKey: 'placeholder', baseURL: `${net.buyer.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: 'placeholder', baseURL: net.buyer.url, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await net?.stop();
  for (const vendor of Object.values(vendors)) await vendor.close();
});

async function askChat(turn: Turn): Promise<Answer> {
  const user = turn.image
    ? [
        { type: 'text' as const, text: 'What is in this image?' },
        { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${PNG_B64}` } },
      ]
    : QUESTION;
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: user }];
  if (turn.answering) {
    const { id, name, args } = turn.answering;
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
      },
      { role: 'tool', tool_call_id: id, content: TOOL_RESULT },
    );
  }
  const params = {
    model: turn.model,
    messages,
    ...(turn.tools
      ? {
          tools: [
            {
              type: 'function' as const,
              function: { name: 'get_weather', description: 'Weather now', parameters: SCHEMA },
            },
          ],
        }
      : {}),
  };
  const completion = turn.stream
    ? await openai.chat.completions
        .stream({ ...params, stream_options: { include_usage: true } })
        .finalChatCompletion()
    : await openai.chat.completions.create(params);
  const choice = completion.choices[0]!;
  const call = choice.message.tool_calls?.[0];
  return {
    text: choice.message.content ?? '',
    ...(call?.type === 'function'
      ? {
          toolCall: {
            id: call.id,
            name: call.function.name,
            args: JSON.parse(call.function.arguments),
          },
        }
      : {}),
    stop: choice.finish_reason,
    usage: {
      input: completion.usage!.prompt_tokens,
      cached: completion.usage!.prompt_tokens_details?.cached_tokens ?? 0,
      output: completion.usage!.completion_tokens,
    },
  };
}

async function askResponses(turn: Turn): Promise<Answer> {
  const input: OpenAI.Responses.ResponseInputItem[] = [
    {
      role: 'user',
      content: turn.image
        ? [
            { type: 'input_text', text: 'What is in this image?' },
            { type: 'input_image', image_url: `data:image/png;base64,${PNG_B64}`, detail: 'auto' },
          ]
        : QUESTION,
    },
  ];
  if (turn.answering) {
    const { id, name, args } = turn.answering;
    input.push(
      { type: 'function_call', call_id: id, name, arguments: JSON.stringify(args) },
      { type: 'function_call_output', call_id: id, output: TOOL_RESULT },
    );
  }
  const params = {
    model: turn.model,
    input,
    ...(turn.tools
      ? {
          tools: [
            {
              type: 'function' as const,
              name: 'get_weather',
              description: 'Weather now',
              parameters: SCHEMA,
              strict: false,
            },
          ],
        }
      : {}),
  };
  const response = turn.stream
    ? await openai.responses.stream(params).finalResponse()
    : await openai.responses.create(params);
  const call = response.output.find((item) => item.type === 'function_call');
  return {
    text: response.output_text,
    ...(call?.type === 'function_call'
      ? { toolCall: { id: call.call_id, name: call.name, args: JSON.parse(call.arguments) } }
      : {}),
    stop: call ? 'tool_call' : (response.status ?? 'unknown'),
    usage: {
      input: response.usage!.input_tokens,
      cached: response.usage!.input_tokens_details.cached_tokens,
      output: response.usage!.output_tokens,
    },
  };
}

async function askMessages(turn: Turn): Promise<Answer> {
  const messages: Anthropic.MessageParam[] = [
    {
      role: 'user',
      content: turn.image
        ? [
            { type: 'text', text: 'What is in this image?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_B64 } },
          ]
        : QUESTION,
    },
  ];
  if (turn.answering) {
    const { id, name, args } = turn.answering;
    messages.push(
      { role: 'assistant', content: [{ type: 'tool_use', id, name, input: args }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: TOOL_RESULT }] },
    );
  }
  const params = {
    model: turn.model,
    max_tokens: 256,
    messages,
    ...(turn.tools
      ? {
          tools: [
            {
              name: 'get_weather',
              description: 'Weather now',
              input_schema: SCHEMA as Anthropic.Tool.InputSchema,
            },
          ],
        }
      : {}),
  };
  const message = turn.stream
    ? await anthropic.messages.stream(params).finalMessage()
    : await anthropic.messages.create(params);
  const call = message.content.find((block) => block.type === 'tool_use');
  const cached = message.usage.cache_read_input_tokens ?? 0;
  return {
    text: message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
    ...(call?.type === 'tool_use'
      ? { toolCall: { id: call.id, name: call.name, args: call.input } }
      : {}),
    stop: message.stop_reason ?? 'unknown',
    usage: {
      input: message.usage.input_tokens + cached + (message.usage.cache_creation_input_tokens ?? 0),
      cached,
      output: message.usage.output_tokens,
    },
  };
}

const ASK: Record<ApiFormat, (turn: Turn) => Promise<Answer>> = {
  chat: askChat,
  responses: askResponses,
  messages: askMessages,
};
const TEXT_STOP: Record<ApiFormat, string> = {
  chat: 'stop',
  responses: 'completed',
  messages: 'end_turn',
};
const TOOL_STOP: Record<ApiFormat, string> = {
  chat: 'tool_calls',
  responses: 'tool_call',
  messages: 'tool_use',
};

/** True when the vendor's request carries an image in its own format. */
function hasImage(format: ApiFormat, body: Json): boolean {
  const list = (value: unknown) => (Array.isArray(value) ? (value as Json[]) : []);
  const parts = list(format === 'responses' ? body.input : body.messages).flatMap((m) =>
    list(m.content),
  );
  const type = { chat: 'image_url', responses: 'input_image', messages: 'image' }[format];
  return parts.some((part) => part.type === type);
}

describe.each(FORMATS)('%s client', (client) => {
  describe.each(FORMATS)('-> %s seller', (seller) => {
    const model = `matrix-${seller}`;

    it.each([false, true])(
      'answers plain text with stop reason and cached usage (stream: %s)',
      async (stream) => {
        const answer = await ASK[client]({ model, stream });
        expect(answer.text).toBe('Hello there!');
        expect(answer.toolCall).toBeUndefined();
        expect(answer.stop).toBe(TEXT_STOP[client]);
        expect(answer.usage).toEqual({ input: 125, cached: 100, output: 15 });
      },
    );

    it.each([false, true])('carries a tool-call round trip (stream: %s)', async (stream) => {
      const first = await ASK[client]({ model, stream, tools: true });
      expect(first.stop).toBe(TOOL_STOP[client]);
      expect(first.toolCall).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
      expect(first.toolCall!.id.length).toBeGreaterThan(0);
      expect(first.text).toBe('Let me check.');

      const second = await ASK[client]({ model, stream, tools: true, answering: first.toolCall! });
      expect(second.text).toBe('Hello there!');
      expect(second.stop).toBe(TEXT_STOP[client]);
      const received = vendors[seller].requests.at(-1)!;
      expect(hasToolResult(seller, received)).toBe(true);
      expect(JSON.stringify(received)).toContain(TOOL_RESULT);
    });

    it('passes an image input through in the seller format', async () => {
      const answer = await ASK[client]({ model, stream: false, image: true });
      expect(answer.text).toBe('Hello there!');
      const received = vendors[seller].requests.at(-1)!;
      expect(hasImage(seller, received)).toBe(true);
      expect(JSON.stringify(received)).toContain(PNG_B64);
    });
  });
});
