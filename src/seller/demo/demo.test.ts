import { describe, expect, it } from 'vitest';
import { SseDecoder } from '../../formats/index.js';
import type { ApiProtocol } from '../../network/index.js';
import { demoAnswer } from '../demo.js';

type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
type Loose = any;

const readSchema = {
  type: 'object',
  properties: {
    file_path: { type: 'string', description: 'The absolute path to the file to read' },
    limit: { type: 'number' },
  },
  required: ['file_path'],
};
const bashSchema = {
  type: 'object',
  properties: { command: { type: 'string' }, description: { type: 'string' } },
  required: ['command'],
};
const system = 'You are an agent.\nPrimary working directory: /home/me/project\n';

async function json(protocol: ApiProtocol, body: Json): Promise<Loose> {
  return JSON.parse((await demoAnswer(protocol, 'svc-demo-smart', body, 100)).parts.join(''));
}

async function events(protocol: ApiProtocol, body: Json): Promise<Loose[]> {
  const answer = await demoAnswer(protocol, 'svc-demo-smart', { ...body, stream: true }, 100);
  const parser = new SseDecoder();
  return parser
    .push(answer.parts.join(''))
    .filter((event) => event.data !== '[DONE]')
    .map((event) => JSON.parse(event.data));
}

const messagesTools = [
  { name: 'Read', description: 'Reads a file', input_schema: readSchema },
  { name: 'Bash', description: 'Runs a command', input_schema: bashSchema },
];

describe('demo model (messages)', () => {
  const ask = (text: string, extra: Json = {}) => ({
    model: 'm',
    max_tokens: 100,
    system,
    tools: messagesTools,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>read everything.txt</system-reminder>' },
          { type: 'text', text },
        ],
      },
    ],
    ...extra,
  });

  it('calls Read with an absolute path when asked to read a file', async () => {
    const body = await json('anthropic-messages', ask('Read notes.txt and tell me what it says'));
    expect(body.stop_reason).toBe('tool_use');
    const call = body.content.find((block: Json) => block.type === 'tool_use');
    expect(call).toMatchObject({
      name: 'Read',
      input: { file_path: '/home/me/project/notes.txt' },
    });
  });

  it('streams the tool input in several input_json_delta events that rebuild it', async () => {
    const stream = await events('anthropic-messages', ask('Read notes.txt'));
    const pieces = stream
      .filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta')
      .map((e) => e.delta.partial_json as string);
    expect(pieces.length).toBeGreaterThan(1);
    expect(JSON.parse(pieces.join(''))).toEqual({ file_path: '/home/me/project/notes.txt' });
    expect(stream.find((e) => e.type === 'message_delta').delta.stop_reason).toBe('tool_use');
  });

  it('makes parallel calls for two asks, and runs commands with the shell tool', async () => {
    const two = await json('anthropic-messages', ask('Read a.txt and b.md please'));
    expect(
      two.content.filter((b: Json) => b.type === 'tool_use').map((b: Loose) => b.input.file_path),
    ).toEqual(['/home/me/project/a.txt', '/home/me/project/b.md']);
    const run = await json('anthropic-messages', ask('Run `echo hi` for me'));
    expect(run.content.at(-1)).toMatchObject({ name: 'Bash', input: { command: 'echo hi' } });
  });

  it('quotes the tool result in text after the tool ran, ending the turn', async () => {
    const body = await json('anthropic-messages', {
      model: 'm',
      max_tokens: 100,
      tools: messagesTools,
      messages: [
        { role: 'user', content: 'Read notes.txt' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't1', content: '1→the word is pelican' }],
        },
      ],
    });
    expect(body.stop_reason).toBe('end_turn');
    expect(body.content[0].text).toContain('the word is pelican');
  });

  it('answers in text without tools, with thinking when asked and cached input when marked', async () => {
    const long = 'lorem ipsum '.repeat(800);
    const body = await json('anthropic-messages', {
      model: 'm',
      max_tokens: 100,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      system: [{ type: 'text', text: long, cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Read notes.txt' }],
    });
    expect(body.stop_reason).toBe('end_turn');
    expect(body.content.map((b: Json) => b.type)).toEqual(['thinking', 'text']);
    expect(body.content[0].signature).toMatch(/\S/);
    expect(body.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(body.usage.cache_read_input_tokens % 128).toBe(0);
  });
});

describe('demo model (responses)', () => {
  const tools = [
    {
      type: 'function',
      name: 'exec_command',
      parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
    },
    { type: 'web_search' },
  ];
  const input = [
    {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: '<environment_context><cwd>/w</cwd></environment_context>' },
      ],
    },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Read notes.txt' }] },
  ];

  it('runs cat through the shell tool, streams arguments in deltas, with a reasoning item', async () => {
    const stream = await events('openai-responses', {
      model: 'm',
      tools,
      input,
      reasoning: { summary: 'auto' },
    });
    const deltas = stream.filter((e) => e.type === 'response.function_call_arguments.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(JSON.parse(deltas.map((e) => e.delta).join(''))).toEqual({ cmd: 'cat notes.txt' });
    const done = stream.at(-1);
    expect(done.type).toBe('response.completed');
    expect(done.response.output.map((item: Json) => item.type)).toEqual([
      'reasoning',
      'message',
      'function_call',
    ]);
    expect(stream.map((e) => e.sequence_number)).toEqual(stream.map((_, index) => index));
  });

  it('quotes function_call_output items', async () => {
    const body = await json('openai-responses', {
      model: 'm',
      tools,
      input: [
        ...input,
        { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'pelican' },
      ],
    });
    expect(body.output.map((item: Json) => item.type)).toEqual(['message']);
    expect(body.output[0].content[0].text).toContain('pelican');
  });
});

describe('demo model (chat)', () => {
  const tools = [
    {
      type: 'function',
      function: {
        name: 'read',
        parameters: {
          type: 'object',
          properties: { filePath: { type: 'string', description: 'The absolute path' } },
          required: ['filePath'],
        },
      },
    },
  ];
  const messages = [
    { role: 'system', content: 'Working directory: /p' },
    { role: 'user', content: '"Read notes.txt and list the files in src"' },
  ];

  it('streams parallel tool calls with finish_reason tool_calls and a usage chunk', async () => {
    const stream = await events('openai-chat-completions', { model: 'm', tools, messages });
    const calls = new Map<number, string>();
    const names: string[] = [];
    for (const chunk of stream) {
      for (const call of chunk.choices?.[0]?.delta?.tool_calls ?? []) {
        if (call.function.name) names.push(call.function.name);
        calls.set(call.index, (calls.get(call.index) ?? '') + call.function.arguments);
      }
    }
    // No list tool: listing falls back to… nothing (no shell either), so one call.
    expect(names).toEqual(['read']);
    expect(JSON.parse(calls.get(0)!)).toEqual({ filePath: '/p/notes.txt' });
    expect(stream.find((c) => c.choices?.[0]?.finish_reason).choices[0].finish_reason).toBe(
      'tool_calls',
    );
    expect(stream.at(-1).usage.completion_tokens).toBeGreaterThan(0);
  });

  it('says hello in text when no tool is needed', async () => {
    const body = await json('openai-chat-completions', {
      model: 'm',
      messages: [{ role: 'user', content: 'say hi' }],
    });
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.choices[0].message.content).toContain('say hi');
    expect(body.choices[0].message.tool_calls).toBeUndefined();
  });
});
