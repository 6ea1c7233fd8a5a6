import { describe, expect, it } from 'vitest';
import { capMaxOutputTokens, maxOutputTokensOf } from './maxTokens.js';

describe('output-token limits', () => {
  it('reads the limit of each format', () => {
    expect(maxOutputTokensOf('chat', { max_tokens: 100, max_completion_tokens: 50 })).toBe(50);
    expect(maxOutputTokensOf('responses', { max_output_tokens: 70 })).toBe(70);
    expect(maxOutputTokensOf('messages', { max_tokens: 9 })).toBe(9);
    expect(maxOutputTokensOf('chat', {})).toBeUndefined();
  });

  it('caps without raising, and sets a limit when there is none', () => {
    expect(capMaxOutputTokens('chat', { max_tokens: 100 }, 40)).toEqual({ max_tokens: 40 });
    expect(capMaxOutputTokens('chat', { max_tokens: 10 }, 40)).toEqual({ max_tokens: 10 });
    expect(capMaxOutputTokens('chat', {}, 40.7)).toEqual({ max_completion_tokens: 40 });
    expect(capMaxOutputTokens('responses', { stream: true }, 5)).toEqual({
      stream: true,
      max_output_tokens: 5,
    });
    expect(capMaxOutputTokens('messages', { max_tokens: 8192 }, 0)).toEqual({ max_tokens: 1 });
  });
});
