import { describe, expect, it } from 'vitest';
import type { SseEvent } from './sse.js';
import { translateRequest } from './translateRequest.js';
import { assembleResponse, translateResponse } from './translateResponse.js';
import { translateStream } from './translateStream.js';

const LONG = `mcp__claude_ai_google_drive__${'search_files_in_shared_folder_'.repeat(3)}`;

describe('tool names OpenAI refuses', () => {
  const request = {
    model: 'claude',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'find it' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: LONG, input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'none' }] },
    ],
    tools: [
      { name: LONG, input_schema: { type: 'object', properties: {} } },
      { name: 'short_ok', input_schema: { type: 'object', properties: {} } },
    ],
    tool_choice: { type: 'tool', name: LONG },
  };

  it('are renamed for the seller and restored in its answers and streams', async () => {
    const translated = translateRequest(request, 'messages', 'chat');
    const body = translated.body as {
      tools: Array<{ function: { name: string } }>;
      tool_choice: { function: { name: string } };
      messages: Array<{ tool_calls?: Array<{ function: { name: string } }> }>;
    };
    const sellerName = body.tools[0]?.function.name ?? '';
    expect(sellerName).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(body.tools[1]?.function.name).toBe('short_ok');
    expect(body.tool_choice.function.name).toBe(sellerName);
    expect(body.messages[1]?.tool_calls?.[0]?.function.name).toBe(sellerName);
    expect(translated.toolNames).toEqual({ [sellerName]: LONG });

    const answer = {
      id: 'x',
      model: 'g',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c', type: 'function', function: { name: sellerName, arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const ctx = { toolNames: translated.toolNames ?? {} };
    expect(translateResponse(answer, 'chat', 'messages', ctx)).toMatchObject({
      content: [{ type: 'tool_use', name: LONG }],
    });

    const chunk = (delta: unknown, finish: string | null = null) => ({
      data: JSON.stringify({
        id: 'x',
        model: 'g',
        choices: [{ index: 0, delta, finish_reason: finish }],
      }),
    });
    const events: SseEvent[] = [
      chunk({
        tool_calls: [
          { index: 0, id: 'c', type: 'function', function: { name: sellerName, arguments: '{}' } },
        ],
      }),
      chunk({}, 'tool_calls'),
      { data: '[DONE]' },
    ];
    const out: string[] = [];
    for await (const e of translateStream(events, 'chat', 'messages', ctx)) out.push(e.data);
    expect(out.join('\n')).toContain(`"name":"${LONG}"`);
    expect(await assembleResponse(events, 'chat', 'messages', ctx)).toMatchObject({
      content: [{ name: LONG }],
    });
  });

  it('leaves valid names alone', () => {
    const { toolNames } = translateRequest(
      {
        ...request,
        tools: [request.tools[1]],
        messages: [request.messages[0]],
        tool_choice: undefined,
      },
      'messages',
      'chat',
    );
    expect(toolNames).toBeUndefined();
  });
});
