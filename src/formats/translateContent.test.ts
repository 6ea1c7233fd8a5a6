/** What a request carries between the formats: tool results, images, parameters, built-in tools, documents. */
import { describe, expect, it } from 'vitest';
import { svcFailure as failure } from '../testing/index.js';
import { translateRequest, withStreamUsage } from './translateRequest.js';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('coverage', () => {
  it('puts tool results first, then user text, in chat and messages', () => {
    const body = {
      model: 'm',
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 't1', name: 'w', input: { c: 'P' } },
            { type: 'tool_use', id: 't2', name: 'w', input: { c: 'L' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'also, thanks' },
            { type: 'tool_result', tool_use_id: 't2', content: 'rain' },
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [{ type: 'text', text: 'boom' }],
              is_error: true,
            },
          ],
        },
      ],
    };
    const chat = translateRequest(body, 'messages', 'chat').body as {
      messages: Array<Record<string, unknown>>;
    };
    expect(chat.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 't1', type: 'function', function: { name: 'w', arguments: '{"c":"P"}' } },
          { id: 't2', type: 'function', function: { name: 'w', arguments: '{"c":"L"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 't2', content: 'rain' },
      { role: 'tool', tool_call_id: 't1', content: 'Error: boom' },
      { role: 'user', content: 'also, thanks' },
    ]);
    const responses = translateRequest(body, 'messages', 'responses').body as {
      input: Array<Record<string, unknown>>;
    };
    expect(responses.input.map((i) => i.type ?? i.role)).toEqual([
      'user',
      'function_call',
      'function_call',
      'function_call_output',
      'function_call_output',
      'user',
    ]);
  });

  it('carries images both ways (URL and base64)', () => {
    const chat = {
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          ],
        },
      ],
    };
    const messages = translateRequest(chat, 'chat', 'messages').body as {
      messages: Array<{ content: unknown }>;
    };
    expect(messages.messages[0]?.content).toEqual([
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ]);
    const back = translateRequest(messages, 'messages', 'responses').body as {
      input: Array<{ content: unknown }>;
    };
    expect(back.input[0]?.content).toEqual([
      { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' },
      { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
    ]);
  });

  it('maps tool_choice, parallel calls, max tokens, sampling, structured output, reasoning and user', () => {
    const chat = {
      model: 'm',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'f', parameters: { type: 'object', properties: {} } },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      max_completion_tokens: 30000,
      temperature: 0.3,
      top_p: 0.9,
      stop: 'END',
      reasoning_effort: 'high',
      user: 'u-1',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'out', schema: { type: 'object' }, strict: true },
      },
      stream: true,
    };
    const { body } = translateRequest(chat, 'chat', 'messages');
    expect(body).toMatchObject({
      system: 'sys',
      tool_choice: { type: 'tool', name: 'f', disable_parallel_tool_use: true },
      max_tokens: 30000,
      temperature: 0.3,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
      stream: true,
    });
    expect(body.top_p).toBeUndefined();
    expect(body.thinking).toBeUndefined();
    const thinking = translateRequest({ ...chat, tool_choice: 'auto' }, 'chat', 'messages');
    expect(thinking.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 24576 } });
    expect(thinking.body.temperature).toBeUndefined();
    expect(thinking.warnings).toContain('temperature dropped (not allowed with thinking)');
    const { stop: _stop, ...noStop } = chat;
    const responses = translateRequest(noStop, 'chat', 'responses').body;
    expect(responses).toMatchObject({
      instructions: 'sys',
      tool_choice: { type: 'function', name: 'f' },
      parallel_tool_calls: false,
      max_output_tokens: 30000,
      reasoning: { effort: 'high', summary: 'auto' },
      text: {
        format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true },
      },
      user: 'u-1',
    });
    const toChat = translateRequest(thinking.body, 'messages', 'chat').body;
    expect(toChat).toMatchObject({
      tool_choice: 'auto',
      parallel_tool_calls: false,
      max_completion_tokens: 30000,
      reasoning_effort: 'high',
      stream_options: { include_usage: true },
    });
    for (const [choice, expected] of [
      ['auto', { type: 'auto' }],
      ['none', { type: 'none' }],
      ['required', { type: 'any' }],
    ] as const) {
      expect(
        translateRequest(
          { ...chat, tool_choice: choice, parallel_tool_calls: true },
          'chat',
          'messages',
        ).body.tool_choice,
      ).toEqual(expected);
    }
  });

  it('keeps system prompts as blocks and adds include_usage to chat streams', () => {
    const body = {
      model: 'm',
      max_tokens: 10,
      system: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two', cache_control: { type: 'ephemeral' } },
      ],
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    };
    const chat = translateRequest(body, 'messages', 'chat').body as { messages: unknown[] };
    expect(chat.messages[0]).toEqual({
      role: 'system',
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
    });
    expect(translateRequest(chat, 'chat', 'messages').body.system).toEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: 'two' },
    ]);
    expect(withStreamUsage({ stream: true, stream_options: { x: 1 } })).toEqual({
      stream: true,
      stream_options: { x: 1, include_usage: true },
    });
  });
});

describe('built-in tools', () => {
  it('are dropped with a warning unless forced', () => {
    const body = {
      model: 'm',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'search' }],
      tools: [
        { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
        { name: 'f', input_schema: { type: 'object', properties: {} } },
      ],
    };
    const { body: out, warnings } = translateRequest(body, 'messages', 'chat');
    expect((out.tools as unknown[]).length).toBe(1);
    expect(warnings).toContain('tool web_search dropped (built-in tools cannot be carried)');
    expect(
      failure(() =>
        translateRequest(
          { ...body, tool_choice: { type: 'tool', name: 'web_search' } },
          'messages',
          'chat',
        ),
      ),
    ).toEqual({
      code: 'translation_unsupported',
      status: 400,
      param: 'tool_choice',
    });
    const responses = { model: 'm', input: 'hi', tools: [{ type: 'web_search' }] };
    expect(translateRequest(responses, 'responses', 'messages').warnings).toContain(
      'tool web_search dropped (built-in tools cannot be carried)',
    );
  });
});

describe('documents', () => {
  const PDF = 'JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoK';
  it('carry PDFs between formats, in user turns and tool results', () => {
    const body = {
      model: 'm',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: PDF },
              title: 'spec.pdf',
            },
            { type: 'text', text: 'Summarise' },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't1', name: 'read', input: { path: 'a.pdf' } }],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [
                {
                  type: 'document',
                  source: { type: 'text', media_type: 'text/plain', data: 'plain notes' },
                },
              ],
            },
          ],
        },
      ],
    };
    const chat = translateRequest(body, 'messages', 'chat').body as {
      messages: Array<{ role: string; content: unknown }>;
    };
    expect(chat.messages[0]?.content).toEqual([
      {
        type: 'file',
        file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'spec.pdf' },
      },
      { type: 'text', text: 'Summarise' },
    ]);
    expect(chat.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 't1', content: '' },
      { role: 'user', content: [{ type: 'text', text: 'plain notes' }] },
    ]);
    const responses = translateRequest(body, 'messages', 'responses').body as {
      input: Array<Record<string, unknown>>;
    };
    expect((responses.input[0]?.content as unknown[] | undefined)?.[0]).toEqual({
      type: 'input_file',
      file_data: `data:application/pdf;base64,${PDF}`,
      filename: 'spec.pdf',
    });
    expect(responses.input[2]).toEqual({
      type: 'function_call_output',
      call_id: 't1',
      output: [{ type: 'input_text', text: 'plain notes' }],
    });
    const back = translateRequest(responses, 'responses', 'messages').body as {
      messages: Array<{ content: unknown }>;
    };
    expect(back.messages[0]?.content).toEqual(body.messages[0]?.content);
  });

  it('refuses files by id and odd file types, naming the field', () => {
    const chat = {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }],
    };
    expect(failure(() => translateRequest(chat, 'chat', 'messages')).param).toBe(
      'messages[0].content[0].file.file_id',
    );
    const zip = {
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [{ type: 'file', file: { file_data: 'data:application/zip;base64,UEsDBA==' } }],
        },
      ],
    };
    expect(failure(() => translateRequest(zip, 'chat', 'messages'))).toEqual({
      code: 'translation_unsupported',
      status: 400,
      param: 'messages[0].content[0].file.file_data',
    });
  });
});
