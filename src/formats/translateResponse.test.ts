import { describe, expect, it } from 'vitest';
import { isSvcError } from '../errors/index.js';
import { parseSellerJson } from './check.js';
import { errorResponseOf, translateError } from './errors.js';
import { RESPONSES } from './testing/samples.js';
import { translateResponse } from './translateResponse.js';
import { API_FORMATS } from './types.js';

describe('non-streaming responses', () => {
  it.each(API_FORMATS)('malformed %s seller output is a 502 invalid_seller_response', (from) => {
    for (const to of API_FORMATS) {
      for (const body of [
        null,
        'text',
        { id: 'x' },
        { choices: [{}] },
        { output: [{ type: 'function_call' }] },
        { content: [1] },
      ]) {
        let caught: unknown;
        try {
          translateResponse(body, from, to);
        } catch (error) {
          caught = error;
        }
        expect(isSvcError(caught) && [caught.status, caught.code]).toEqual([
          502,
          'invalid_seller_response',
        ]);
      }
    }
  });

  it('seller text that is not JSON is a 502 invalid_seller_response', () => {
    let caught: unknown;
    try {
      parseSellerJson('<html>oops', 'a response');
    } catch (error) {
      caught = error;
    }
    expect(isSvcError(caught) && [caught.status, caught.code]).toEqual([
      502,
      'invalid_seller_response',
    ]);
  });

  it('maps stop reasons through the one table', () => {
    const max = { ...(RESPONSES.messages.text as object), stop_reason: 'max_tokens' };
    expect(translateResponse(max, 'messages', 'chat')).toMatchObject({
      choices: [{ finish_reason: 'length' }],
    });
    expect(translateResponse(max, 'messages', 'responses')).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
    const seq = {
      ...(RESPONSES.messages.text as object),
      stop_reason: 'stop_sequence',
      stop_sequence: 'END',
    };
    expect(translateResponse(seq, 'messages', 'chat')).toMatchObject({
      choices: [{ finish_reason: 'stop' }],
    });
    const filtered = {
      ...(RESPONSES.chat.text as object),
      choices: [
        { index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' },
      ],
    };
    expect(translateResponse(filtered, 'chat', 'messages')).toMatchObject({
      stop_reason: 'refusal',
    });
    const long = {
      ...(RESPONSES.responses.text as object),
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    };
    expect(translateResponse(long, 'responses', 'messages')).toMatchObject({
      stop_reason: 'max_tokens',
    });
  });

  it('shows the model the client asked for when given', () => {
    expect(
      translateResponse(RESPONSES.chat.text, 'chat', 'messages', { model: 'claude-x' }),
    ).toMatchObject({ model: 'claude-x' });
  });

  it('maps usage with cached tokens both ways', () => {
    expect(translateResponse(RESPONSES.chat.text, 'chat', 'messages').usage).toMatchObject({
      input_tokens: 25,
      cache_read_input_tokens: 100,
      output_tokens: 15,
    });
    expect(translateResponse(RESPONSES.messages.text, 'messages', 'responses').usage).toMatchObject(
      {
        input_tokens: 125,
        input_tokens_details: { cached_tokens: 100 },
        output_tokens: 15,
      },
    );
  });
});

describe('errors', () => {
  it('an Anthropic overload becomes an OpenAI error with the same status and message', () => {
    const out = translateError(
      529,
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      'messages',
      'chat',
    );
    expect(out).toEqual({
      status: 529,
      body: {
        error: { message: 'Overloaded', type: 'api_error', code: 'overloaded_error', param: null },
      },
    });
  });

  it('an OpenAI rate limit becomes an Anthropic rate_limit_error', () => {
    const out = translateError(
      429,
      {
        error: {
          message: 'Slow down',
          type: 'rate_limit_error',
          code: 'rate_limit_exceeded',
          param: null,
        },
      },
      'chat',
      'messages',
    );
    expect(out).toEqual({
      status: 429,
      body: {
        type: 'error',
        error: { type: 'rate_limit_error', message: 'Slow down', code: 'rate_limit_exceeded' },
      },
    });
  });

  it('an invalid-request error keeps its param', () => {
    const out = translateError(
      400,
      { error: { message: 'bad', type: 'invalid_request_error', param: 'messages', code: null } },
      'responses',
      'chat',
    );
    expect(out.body).toEqual({
      error: {
        message: 'bad',
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        param: 'messages',
      },
    });
  });

  it('a body that is not an error object still yields a clean error', () => {
    expect(translateError(503, '<html>bad gateway</html>', 'chat', 'messages')).toEqual({
      status: 503,
      body: {
        type: 'error',
        error: {
          type: 'overloaded_error',
          message: 'The seller answered with status 503.',
          code: 'upstream_error',
        },
      },
    });
    expect(translateError(200, null, 'chat', 'chat').status).toBe(502);
  });

  it('renders our own errors in the client style', () => {
    let thrown: unknown;
    try {
      translateResponse({}, 'chat', 'messages');
    } catch (error) {
      thrown = error;
    }
    expect(errorResponseOf(thrown, 'messages')).toMatchObject({
      status: 502,
      body: { type: 'error', error: { type: 'api_error', code: 'invalid_seller_response' } },
    });
  });
});
