import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from './codes.js';
import {
  errorStyleForPath,
  renderAnthropicError,
  renderBothStyles,
  renderOpenAiError,
} from './render.js';
import { SvcError } from './SvcError.js';

const specCodes: Array<[ErrorCode, number]> = [
  ['topup_not_available', 403],
  ['topup_not_allowed', 403],
  ['gateway_auth_required', 401],
  ['missing_routing_target', 400],
  ['no_default_route', 400],
  ['insufficient_deposits', 402],
  ['upload_body_too_large', 413],
  ['model_not_found', 502],
];

describe('error codes', () => {
  it.each(specCodes)('%s has its documented status (%i)', (code, status) => {
    expect(new SvcError(code).status).toBe(status);
  });

  it.each(Object.keys(ERROR_CODES) as ErrorCode[])(
    '%s renders in both styles with its code',
    (code) => {
      const error = new SvcError(code, { details: { extra: 1 } });
      const openai = renderOpenAiError(error);
      expect(openai.error.code).toBe(code);
      expect(openai.error.message.length).toBeGreaterThan(10);
      expect(openai.error.type).toMatch(/_error$|insufficient_quota/);
      expect(openai.error.extra).toBe(1);
      const anthropic = renderAnthropicError(error);
      expect(anthropic.type).toBe('error');
      expect(anthropic.error.code).toBe(code);
      expect(anthropic.error.message).toBe(openai.error.message);
      expect(anthropic.error.type).toMatch(/_error$|request_too_large/);
    },
  );

  it('maps statuses to the vendor types clients branch on', () => {
    expect(renderOpenAiError(new SvcError('insufficient_deposits')).error.type).toBe(
      'insufficient_quota',
    );
    expect(renderAnthropicError(new SvcError('insufficient_deposits')).error.type).toBe(
      'billing_error',
    );
    expect(renderAnthropicError(new SvcError('upload_body_too_large')).error.type).toBe(
      'request_too_large',
    );
    expect(renderOpenAiError(new SvcError('model_not_found')).error.type).toBe('api_error');
    expect(renderAnthropicError(new SvcError('rate_limited')).error.type).toBe('rate_limit_error');
  });

  it('carries param separately in OpenAI style', () => {
    const body = renderOpenAiError(
      new SvcError('invalid_request', { details: { param: 'messages' } }),
    );
    expect(body.error.param).toBe('messages');
  });

  it('never lets a secret into a message', () => {
    const error = new SvcError('upstream_error', {
      message:
        'upstream said: bad key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 for Bearer svc_abcdefghijklmnopqrstuvwxyz012345',
    });
    expect(error.message).not.toContain('abcdefghijklmnop');
    expect(error.message).toContain('[redacted]');
  });

  it('picks the style from the route', () => {
    expect(errorStyleForPath('/v1/messages')).toBe('anthropic');
    expect(errorStyleForPath('/v1/messages/count_tokens')).toBe('anthropic');
    expect(errorStyleForPath('/v1/chat/completions')).toBe('openai');
    expect(errorStyleForPath('/v1/responses')).toBe('openai');
  });

  it.each([
    ['model_not_found', 'false'],
    ['unauthorized', 'false'],
    ['invalid_request', 'false'],
    ['insufficient_deposits', 'false'],
    ['seller_error', undefined],
    ['rate_limited', undefined],
    ['channel_lock_exhausted', undefined],
    ['store_unavailable', undefined],
  ] as Array<[ErrorCode, string | undefined]>)('%s carries x-should-retry: %s', (code, value) => {
    expect(new SvcError(code).headers?.['x-should-retry']).toBe(value);
  });

  it('renders a refused key in a shape both vendors read', () => {
    const body = renderBothStyles(new SvcError('unauthorized'));
    expect(body).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error', code: 'unauthorized', param: null },
    });
    expect(body.error.message).toMatch(/Bearer/);
  });
});
