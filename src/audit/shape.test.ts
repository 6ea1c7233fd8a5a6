import { describe, expect, it } from 'vitest';
import { renderProbe, writeProbe } from './generator/fill.js';
import { IdSlot, JsonSlot, shapeOf, TextSlot } from './shape.js';
import { seededRandom } from './testing/demoMarket.js';

const USER_WORDS = 'Please help me migrate the Zorblax invoices table before Friday';
const headers: [string, string][] = [
  ['accept', 'application/json'],
  ['user-agent', 'claude-cli/2.1.197 (external, cli)'],
  ['content-type', 'application/json'],
];

const agentBody = {
  model: 'svc-demo-smart',
  max_tokens: 32000,
  system: [
    { type: 'text', text: 'You are Claude Code. Be brief.', cache_control: { type: 'ephemeral' } },
  ],
  messages: [
    { role: 'user', content: [{ type: 'text', text: USER_WORDS }] },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'secret plan', signature: 'sig' },
        { type: 'text', text: 'Reading it.' },
        {
          type: 'tool_use',
          id: 'toolu_01AbCdEf123456GhIj',
          name: 'Read',
          input: { file_path: '/home/ann/zorblax/db.sql' },
        },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01AbCdEf123456GhIj',
          content: 'CREATE TABLE zorblax_invoices (id int);',
        },
      ],
    },
  ],
  tools: [
    {
      name: 'Read',
      description: 'Reads a file from the local filesystem.',
      input_schema: {
        type: 'object',
        properties: {
          file_path: { type: 'string', description: 'Absolute path' },
          mode: { enum: ['text', 'binary'] },
        },
        required: ['file_path'],
      },
    },
  ],
  metadata: { user_id: 'user_9f8e7d6c5b4a39281706_account' },
  temperature: 0.3,
  stream: true,
};

/** The probe written from a chat request the client sent as `raw`, as the seller would get it. */
function probeOfRaw(raw: string, original: boolean, seed: number): string {
  const shape = shapeOf({
    format: 'chat',
    path: '/v1/chat/completions',
    body: JSON.parse(raw) as Record<string, unknown>,
    rawBody: new TextEncoder().encode(raw),
    headers: [],
    identity: 'default',
  })!;
  const random = seededRandom(seed);
  return new TextDecoder().decode(renderProbe(writeProbe(shape, random), original, random));
}

describe('request shapes', () => {
  it('keep structure, parameters, key order and lengths, and none of the words', () => {
    const shape = shapeOf({
      format: 'messages',
      path: '/v1/messages',
      body: agentBody,
      headers,
      identity: 'teamx',
    })!;
    expect(shape).toBeDefined();
    const body = shape.body as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(Object.keys(agentBody));
    expect(body.max_tokens).toBe(32000);
    expect(body.temperature).toBe(0.3);
    expect(body.stream).toBe(true);
    const messages = body.messages as Record<string, unknown>[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    const first = (messages[0]!.content as Record<string, unknown>[])[0]!;
    expect(first.type).toBe('text');
    expect(first.text).toBeInstanceOf(TextSlot);
    expect(first.text).toMatchObject({
      voice: 'user',
      code: false,
      chars: USER_WORDS.length,
      lines: 1,
    });
    expect((first.text as TextSlot).segments).toEqual([
      { fenced: false, chars: USER_WORDS.length, lines: 1, questions: 0 },
    ]);
    // Signed reasoning nobody can forge is left out; the tool call keeps its pairing by id.
    const assistant = messages[1]!.content as Record<string, unknown>[];
    expect(assistant.map((block) => block.type)).toEqual(['text', 'tool_use']);
    expect(assistant[1]!.id).toBeInstanceOf(IdSlot);
    expect(assistant[1]!.name).toBe('Read');
    const input = assistant[1]!.input as Record<string, unknown>;
    expect(input.file_path).toBeInstanceOf(TextSlot);
    const tool = (body.tools as Record<string, unknown>[])[0]!;
    expect(tool.description).toBeInstanceOf(TextSlot);
    const schema = tool.input_schema as { properties: Record<string, Record<string, unknown>> };
    expect(schema.properties.mode!.enum).toEqual(['text', 'binary']);
    expect((body.metadata as Record<string, unknown>).user_id).toBeInstanceOf(IdSlot);
    expect(shape.identity).toBe('teamx');
    expect(shape.headers).toEqual(headers);
    expect(JSON.stringify(shape)).not.toContain('Zorblax');
    expect(JSON.stringify(shape)).not.toContain('zorblax');
    expect(JSON.stringify(shape)).not.toContain('secret plan');
  });

  it('take function-call arguments as JSON, and Python clients’ spacing', () => {
    const shape = shapeOf({
      format: 'chat',
      path: '/v1/chat/completions',
      body: {
        model: 'm',
        messages: [
          { role: 'user', content: 'run it' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_8sd7f6g5h4j3k2l1',
                type: 'function',
                function: { name: 'run', arguments: '{"cmd":"ls -la /secret"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_8sd7f6g5h4j3k2l1', content: 'total 0' },
        ],
      },
      rawHead: new TextEncoder().encode('{"model": "m", "messages": '),
      headers: [],
      identity: 'default',
    })!;
    const call = (
      shape.body as { messages: { tool_calls?: { function: { arguments: unknown } }[] }[] }
    ).messages[1]!.tool_calls![0]!.function;
    expect(call.arguments).toBeInstanceOf(JsonSlot);
    expect(shape.spaced).toBe(true);
    expect(JSON.stringify(shape)).not.toContain('secret');
  });

  it('are not taken from requests that cannot be replayed to other sellers', () => {
    const base = {
      format: 'responses' as const,
      path: '/v1/responses',
      headers: [],
      identity: 'default',
    };
    expect(
      shapeOf({ ...base, body: { model: 'm', input: 'hi', previous_response_id: 'resp_abc' } }),
    ).toBeUndefined();
    expect(
      shapeOf({ ...base, body: { model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] } }),
    ).toBeUndefined();
    expect(
      shapeOf({
        ...base,
        body: {
          model: 'm',
          input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:…' }] }],
        },
      }),
    ).toBeUndefined();
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 40; i++) at = at.x = {} as Record<string, unknown>;
    expect(
      shapeOf({ ...base, body: { model: 'm', input: 'hi', metadata2: deep } }),
    ).toBeUndefined();
  });
});

describe('probes written from a shape', () => {
  it('carry new words of about the same lengths in the same places, and ids only for the seller that saw them', () => {
    const shape = {
      ...shapeOf({
        format: 'messages',
        path: '/v1/messages',
        body: agentBody,
        headers,
        identity: 'teamx',
      })!,
      servedBy: 'x',
    };
    const random = seededRandom(3);
    const probe = writeProbe(shape, random);
    const own = JSON.parse(new TextDecoder().decode(renderProbe(probe, true, random)));
    const other = JSON.parse(new TextDecoder().decode(renderProbe(probe, false, random)));
    expect(Object.keys(own)).toEqual(Object.keys(agentBody));
    expect(own.metadata.user_id).toBe(agentBody.metadata.user_id);
    expect(other.metadata.user_id).not.toBe(agentBody.metadata.user_id);
    expect(other.metadata.user_id).toMatch(/^user_[0-9a-z]+/i);
    expect(other.metadata.user_id.length).toBe(agentBody.metadata.user_id.length);
    // The tool call and its result keep one (fresh) id between them.
    const callId = other.messages[1].content[1].id;
    expect(callId).not.toBe('toolu_01AbCdEf123456GhIj');
    expect(other.messages[2].content[0].tool_use_id).toBe(callId);
    // Texts: the same for every seller, new, and about as long.
    expect(own.messages[0].content[0].text).toBe(other.messages[0].content[0].text);
    const written: string = own.messages[0].content[0].text;
    expect(written).not.toContain('Zorblax');
    expect(written.length).toBe(USER_WORDS.length);
    expect(typeof own.messages[1].content[1].input.file_path).toBe('string');
    expect(own.tools[0].input_schema.properties.mode.enum).toEqual(['text', 'binary']);
  });

  it('are written with the client’s JSON spacing', () => {
    const shape = shapeOf({
      format: 'chat',
      path: '/v1/chat/completions',
      body: {
        model: 'm',
        messages: [{ role: 'user', content: 'hello there, how are you today?' }],
        temperature: 0.5,
      },
      rawHead: new TextEncoder().encode('{"model": "m", '),
      headers: [],
      identity: 'default',
    })!;
    const random = seededRandom(4);
    const bytes = new TextDecoder().decode(renderProbe(writeProbe(shape, random), false, random));
    expect(bytes.startsWith('{"model": "m", "messages": [{"role": "user", "content": ')).toBe(true);
    expect(bytes.endsWith(', "temperature": 0.5}')).toBe(true);
  });

  it('keep numbers as the client wrote them: Python’s 1.0 and 1e-05 stay, JavaScript’s stay too', () => {
    const write = (raw: string) => {
      const bytes = new TextEncoder().encode(raw);
      const shape = shapeOf({
        format: 'chat',
        path: '/v1/chat/completions',
        body: JSON.parse(raw) as Record<string, unknown>,
        rawBody: bytes,
        headers: [],
        identity: 'default',
      })!;
      const random = seededRandom(5);
      return new TextDecoder().decode(renderProbe(writeProbe(shape, random), false, random));
    };
    // httpx since 0.28 (the OpenAI Python SDK's client): compact, with Python's floats.
    const python = write(
      '{"messages":[{"role":"user","content":"hello there, how are you today?"}],"model":"m","temperature":1.0,"top_p":1.0,"presence_penalty":0.0,"logprobs":true,"top_logprobs":2,"frequency_penalty":1e-05}',
    );
    expect(python.startsWith('{"messages":[{"role":"user","content":"')).toBe(true);
    expect(
      python.endsWith(
        '"model":"m","temperature":1.0,"top_p":1.0,"presence_penalty":0.0,"logprobs":true,"top_logprobs":2,"frequency_penalty":1e-05}',
      ),
    ).toBe(true);
    const spaced = write(
      '{"model": "m", "messages": [{"role": "user", "content": "hello there, how are you?"}], "temperature": 0.0}',
    );
    expect(spaced.endsWith('}], "temperature": 0.0}')).toBe(true);
    const node = write(
      '{"model":"m","messages":[{"role":"user","content":"hello there, how are you?"}],"temperature":1,"top_p":0.9}',
    );
    expect(node.endsWith('}],"temperature":1,"top_p":0.9}')).toBe(true);
  });

  it('keep the client’s escapes and final line feed: Go’s \\u003c and newline, PHP’s \\/', () => {
    const write = (raw: string) => probeOfRaw(raw, false, 7);
    const messages = '"messages":[{"role":"user","content":"hello there, how are you today?"}]';
    // Go's encoding/json through a json.Encoder: HTML characters escaped, a line feed at the end.
    const go = write(`{"model":"\\u003cteam\\u003e \\u0026 m",${messages}}\n`);
    expect(go.startsWith('{"model":"\\u003cteam\\u003e \\u0026 m","messages":[{')).toBe(true);
    expect(go.endsWith('}]}\n')).toBe(true);
    // PHP's json_encode: every slash escaped, as in most model names.
    const php = write(`{"model":"meta-llama\\/Llama-3.1-8B",${messages}}`);
    expect(php.startsWith('{"model":"meta-llama\\/Llama-3.1-8B","messages":[{')).toBe(true);
    expect(php.endsWith('}]}')).toBe(true);
    // JavaScript's JSON.stringify: nothing escaped, no line feed; an escaped backslash before a
    // slash is not an escaped slash.
    const node = write(`{"model":"meta-llama/Llama-3.1-8B","user":"a\\\\/b",${messages}}`);
    expect(node.startsWith('{"model":"meta-llama/Llama-3.1-8B","user":"')).toBe(true);
    expect(node.endsWith('}]}')).toBe(true);
  });
});

describe('objects with integer-like keys', () => {
  const write = (raw: string, original = true) => probeOfRaw(raw, original, 8);
  const messages = '"messages":[{"role":"user","content":"hello there, how are you today?"}]';

  it('are written back in the client’s order, not JavaScript’s (which puts "13" before "50256")', () => {
    const logitBias = '"logit_bias":{"50256":-100,"1734":5.0,"13":2}';
    expect(write(`{"model":"m",${messages},${logitBias}}`)).toContain(`}],${logitBias}}`);
    // Keys of both kinds, in a spaced (Python) body, and in a tool call's arguments.
    const spaced = write(
      `{"model": "m", "extra": {"b": 1, "10": 2, "a": {"z": 0, "2": 1.0, "1": 2}}, "messages": [{"role": "user", "content": "hello there, how are you?"}]}`,
    );
    expect(spaced).toContain('"extra": {"b": 1, "10": 2, "a": {"z": 0, "2": 1.0, "1": 2}}, ');
    const call = write(
      `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"pick","arguments":"{\\"b\\":1,\\"10\\":2.0}"}}]}]}`,
    );
    expect(call).toContain('"arguments":"{\\"b\\":1,\\"10\\":2.0}"');
  });

  it('keep their ids fresh for other sellers, and objects JavaScript does not reorder stay plain', () => {
    const raw = `{"model":"m",${messages},"metadata":{"run":"r","7":"session_4f3a9b2c7d1e8f60"}}`;
    const other = write(raw, false);
    const metadata = /"metadata":(\{.*\})\}$/.exec(other)![1]!;
    expect(metadata).toMatch(/^\{"run":"[0-9a-zA-Z]","7":"session_[0-9a-zA-Z]{16}"\}$/);
    expect(metadata).not.toContain('4f3a9b2c7d1e8f60');
    const sorted = '"logit_bias":{"13":2,"1734":5,"x":1}';
    expect(write(`{"model":"m",${messages},${sorted}}`)).toContain(`}],${sorted}}`);
  });
});
