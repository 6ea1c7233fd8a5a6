import { describe, expect, it } from 'vitest';
import { svcFailure as failure } from '../testing/index.js';
import { DEFAULT_MAX_TOKENS } from './messages/renderRequest.js';
import { translateRequest, validateRequest } from './translateRequest.js';
import type { ApiFormat } from './types.js';

describe('validation of client requests', () => {
  const cases: Array<[string, ApiFormat, unknown, string]> = [
    ['missing messages', 'chat', { model: 'm' }, 'messages'],
    ['empty messages', 'messages', { model: 'm', max_tokens: 5, messages: [] }, 'messages'],
    ['missing model', 'chat', { messages: [{ role: 'user', content: 'hi' }] }, 'model'],
    [
      'wrong chat role',
      'chat',
      { model: 'm', messages: [{ role: 'robot', content: 'hi' }] },
      'messages[0].role',
    ],
    [
      'wrong messages role',
      'messages',
      { model: 'm', max_tokens: 5, messages: [{ role: 'tool', content: 'x' }] },
      'messages[0].role',
    ],
    [
      'missing max_tokens',
      'messages',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
      'max_tokens',
    ],
    [
      'chat tool result without a call',
      'chat',
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'nope', content: 'x' },
        ],
      },
      'messages[1].tool_call_id',
    ],
    [
      'responses output without a call',
      'responses',
      { model: 'm', input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] },
      'input[0].call_id',
    ],
    [
      'messages tool_result without a tool_use',
      'messages',
      {
        model: 'm',
        max_tokens: 5,
        messages: [
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] },
        ],
      },
      'messages[0].content[0].tool_use_id',
    ],
    [
      'bad data URL',
      'chat',
      {
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64' } }],
          },
        ],
      },
      'messages[0].content[0].image_url.url',
    ],
    [
      'bad base64 image',
      'messages',
      {
        model: 'm',
        max_tokens: 5,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: '###' } },
            ],
          },
        ],
      },
      'messages[0].content[0].source.data',
    ],
    ['input not a list', 'responses', { model: 'm', input: 42 }, 'input'],
  ];
  it.each(cases)('%s -> 400 naming the field', (_name, format, body, param) => {
    const f = failure(() => validateRequest(body, format));
    expect(f).toEqual({ code: 'invalid_request', status: 400, param });
    for (const to of ['chat', 'responses', 'messages'] as const) {
      expect(failure(() => translateRequest(body, format, to)).param).toBe(param);
    }
  });

  it('a responses request continuing a stored response may answer calls it cannot see', () => {
    expect(() =>
      validateRequest(
        {
          model: 'm',
          previous_response_id: 'resp_1',
          input: [{ type: 'function_call_output', call_id: 'c', output: 'x' }],
        },
        'responses',
      ),
    ).not.toThrow();
    expect(
      failure(() =>
        translateRequest(
          { model: 'm', previous_response_id: 'resp_1', input: 'hi' },
          'responses',
          'chat',
        ),
      ),
    ).toEqual({ code: 'translation_unsupported', status: 400, param: 'previous_response_id' });
  });
});

describe('unsupported and dropped parameters', () => {
  it('refuses stop sequences to responses, naming the parameter', () => {
    const body = { model: 'm', stop: ['END'], messages: [{ role: 'user', content: 'hi' }] };
    expect(failure(() => translateRequest(body, 'chat', 'responses'))).toEqual({
      code: 'translation_unsupported',
      status: 400,
      param: 'stop',
    });
  });

  it('refuses n > 1 and audio', () => {
    const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(failure(() => translateRequest({ ...base, n: 2 }, 'chat', 'messages')).param).toBe('n');
    expect(
      failure(() => translateRequest({ ...base, audio: { voice: 'x' } }, 'chat', 'messages')).param,
    ).toBe('audio');
  });

  it('drops harmless parameters with a warning', () => {
    const body = {
      model: 'm',
      seed: 7,
      frequency_penalty: 0.5,
      messages: [{ role: 'user', content: 'hi' }],
    };
    const { body: out, warnings } = translateRequest(body, 'chat', 'messages');
    expect(out.seed).toBeUndefined();
    expect(warnings).toEqual(expect.arrayContaining(['frequency_penalty dropped', 'seed dropped']));
    expect(out.max_tokens).toBe(DEFAULT_MAX_TOKENS);
  });

  it('drops a user id OpenAI would refuse', () => {
    const body = {
      model: 'm',
      max_tokens: 5,
      metadata: { user_id: `user_${'a'.repeat(64)}` },
      messages: [{ role: 'user', content: 'hi' }],
    };
    const { body: out, warnings } = translateRequest(body, 'messages', 'chat');
    expect(out.user).toBeUndefined();
    expect(warnings).toContain('user dropped (longer than 64 characters)');
  });

  it('passes the same format through untouched', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], weird_vendor_field: 1 };
    expect(translateRequest(body, 'chat', 'chat').body).toBe(body);
  });
});
