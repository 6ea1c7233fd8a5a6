/**
 * The parameters docs/guide/buyer.md "Format translation" lists, end to end: each is sent in every client
 * format to a seller of every format on a real network, and the test reads what the seller's
 * upstream received in its own format — structured output, `parallel_tool_calls`, `tool_choice`,
 * reasoning effort, the thinking budget — or checks the 400 `translation_unsupported` naming the
 * parameter that cannot be carried (and that no seller was called).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiFormat } from '../src/formats/index.js';
import { type ScriptedVendor, startScriptedVendor } from './support/scriptedVendor.js';
import {
  type SellerNetwork,
  type SellerProvider,
  startSellerNetwork,
} from './support/sellerNetwork.js';
import { forcedTool, requestedSchema } from './support/structuredAnswer.js';

type Json = Record<string, unknown>;
const FORMATS: ApiFormat[] = ['chat', 'responses', 'messages'];
const PROVIDER: Record<ApiFormat, SellerProvider> = {
  chat: 'openai-chat',
  responses: 'openai-responses',
  messages: 'anthropic-messages',
};
const PATH: Record<ApiFormat, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
};
const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};
const TOOL_PARAMETERS = { type: 'object', properties: { city: { type: 'string' } } };

let net: SellerNetwork;
const vendors = {} as Record<ApiFormat, ScriptedVendor>;

beforeAll(async () => {
  for (const format of FORMATS) vendors[format] = await startScriptedVendor(format);
  net = await startSellerNetwork(
    FORMATS.map((format) => ({
      provider: PROVIDER[format],
      baseUrl: vendors[format].baseUrl,
      services: { [`params-${format}`]: { upstreamModel: `vendor-${format}` } },
    })),
  );
}, 120_000);

afterAll(async () => {
  await net?.stop();
  for (const vendor of Object.values(vendors)) await vendor.close();
});

/** A request in `client`'s format to the seller of `seller`'s format, with `extra` fields. */
function request(client: ApiFormat, seller: ApiFormat, extra: Json, tools = false): Json {
  const model = `params-${seller}`;
  const question = 'What is the weather in Paris?';
  const toolList = {
    chat: [
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather', parameters: TOOL_PARAMETERS },
      },
    ],
    responses: [
      {
        type: 'function',
        name: 'get_weather',
        description: 'Weather',
        parameters: TOOL_PARAMETERS,
      },
    ],
    messages: [{ name: 'get_weather', description: 'Weather', input_schema: TOOL_PARAMETERS }],
  }[client];
  const base = {
    chat: { model, messages: [{ role: 'user', content: question }], max_completion_tokens: 40_000 },
    responses: { model, input: question, max_output_tokens: 40_000 },
    messages: { model, messages: [{ role: 'user', content: question }], max_tokens: 40_000 },
  }[client];
  return { ...base, ...(tools ? { tools: toolList } : {}), ...extra };
}

async function send(client: ApiFormat, body: Json): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${net.buyer.url}${PATH[client]}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json };
}

/** Sends and returns the body the seller's upstream received. */
async function carried(client: ApiFormat, seller: ApiFormat, body: Json): Promise<Json> {
  const before = vendors[seller].requests.length;
  const { status, json } = await send(client, body);
  expect(status, JSON.stringify(json)).toBe(200);
  expect(vendors[seller].requests.length).toBe(before + 1);
  return vendors[seller].requests.at(-1)!;
}

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null ? (value as Json) : {};
}

/** The reasoning the seller was asked for: an OpenAI effort, or an Anthropic thinking budget. */
function reasoningOf(format: ApiFormat, body: Json): unknown {
  if (format === 'chat') return body.reasoning_effort;
  if (format === 'responses') return record(body.reasoning).effort;
  return record(body.thinking).budget_tokens;
}

describe.each(FORMATS)('%s client', (client) => {
  describe.each(FORMATS)('-> %s seller', (seller) => {
    it('carries structured output (json_schema)', async () => {
      const extra = {
        chat: {
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'weather', schema: SCHEMA, strict: true },
          },
        },
        responses: {
          text: { format: { type: 'json_schema', name: 'weather', schema: SCHEMA, strict: true } },
        },
        messages: { output_config: { format: { type: 'json_schema', schema: SCHEMA } } },
      }[client];
      const body = await carried(client, seller, request(client, seller, extra));
      expect(requestedSchema(seller, body)).toEqual(SCHEMA);
    });

    it('carries parallel_tool_calls: false', async () => {
      const extra = {
        chat: { parallel_tool_calls: false },
        responses: { parallel_tool_calls: false },
        messages: { tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
      }[client];
      const body = await carried(client, seller, request(client, seller, extra, true));
      if (seller === 'messages') {
        expect(body.tool_choice).toMatchObject({ disable_parallel_tool_use: true });
      } else expect(body.parallel_tool_calls).toBe(false);
    });

    it('carries tool_choice naming a tool, and tool_choice required', async () => {
      const named = {
        chat: { tool_choice: { type: 'function', function: { name: 'get_weather' } } },
        responses: { tool_choice: { type: 'function', name: 'get_weather' } },
        messages: { tool_choice: { type: 'tool', name: 'get_weather' } },
      }[client];
      const forced = await carried(client, seller, request(client, seller, named, true));
      expect(forcedTool(seller, forced)?.name).toBe('get_weather');
      const required = {
        chat: { tool_choice: 'required' },
        responses: { tool_choice: 'required' },
        messages: { tool_choice: { type: 'any' } },
      }[client];
      const any = await carried(client, seller, request(client, seller, required, true));
      expect(any.tool_choice).toEqual(seller === 'messages' ? { type: 'any' } : 'required');
    });

    it('carries reasoning effort (OpenAI formats) or the thinking budget (messages)', async () => {
      // An effort and the budget that stands for it (decision 020): high = 24,576 tokens.
      const extra = {
        chat: { reasoning_effort: 'high' },
        responses: { reasoning: { effort: 'high' } },
        messages: { thinking: { type: 'enabled', budget_tokens: 24_576 } },
      }[client];
      const body = await carried(client, seller, request(client, seller, extra));
      expect(reasoningOf(seller, body)).toBe(seller === 'messages' ? 24_576 : 'high');
    });

    it('maps a thinking budget to the nearest effort, and an effort to its budget', async () => {
      const extra = {
        chat: { reasoning_effort: 'medium' },
        responses: { reasoning: { effort: 'medium' } },
        messages: { thinking: { type: 'enabled', budget_tokens: 6_000 } },
      }[client];
      const body = await carried(client, seller, request(client, seller, extra));
      // 6,000 tokens is a medium effort; a medium effort is 8,192 tokens.
      const budget = client === 'messages' ? 6_000 : 8_192;
      expect(reasoningOf(seller, body)).toBe(seller === 'messages' ? budget : 'medium');
    });
  });
});

/** Parameters that cannot be carried: 400 translation_unsupported naming them, nothing sent. */
const REFUSED: Array<{ client: ApiFormat; seller: ApiFormat; extra: Json; param: string }> = [
  { client: 'chat', seller: 'responses', extra: { stop: ['END'] }, param: 'stop' },
  { client: 'messages', seller: 'responses', extra: { stop_sequences: ['END'] }, param: 'stop' },
  { client: 'chat', seller: 'messages', extra: { n: 2 }, param: 'n' },
  {
    client: 'chat',
    seller: 'responses',
    extra: { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } },
    param: 'audio',
  },
  {
    client: 'responses',
    seller: 'chat',
    extra: { conversation: 'conv_123' },
    param: 'conversation',
  },
  {
    client: 'responses',
    seller: 'messages',
    extra: {
      input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-abc' }] }],
    },
    param: 'input[0].content[0].file_id',
  },
];

describe('parameters that cannot be translated', () => {
  it.each(REFUSED)('$client -> $seller: $param', async ({ client, seller, extra, param }) => {
    const before = vendors[seller].requests.length;
    const { status, json } = await send(client, request(client, seller, extra));
    expect(status).toBe(400);
    const error = record(json.error);
    expect(error.code).toBe('translation_unsupported');
    expect(error.param ?? error.message).toContain(param);
    expect(vendors[seller].requests.length).toBe(before);
  });

  it('passes the same parameters untouched to a seller of the client format', async () => {
    const body = await carried('chat', 'chat', request('chat', 'chat', { stop: ['END'], n: 1 }));
    expect(body.stop).toEqual(['END']);
  });
});
