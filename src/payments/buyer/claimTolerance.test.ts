import { describe, expect, it } from 'vitest';
import {
  CLAUDE_ALLOWANCE_PERCENT,
  claimToleranceFor,
  OTHER_ALLOWANCE_PERCENT,
  tokenizerAllowancePercent,
} from './claimTolerance.js';

describe('tokenizerAllowancePercent', () => {
  it.each([
    ['gpt-4o', 0],
    ['gpt-4o-mini-2024-07-18', 0],
    ['openai/gpt-4.1', 0],
    ['o3-mini', 0],
    ['o4-mini', 0],
    ['chatgpt-4o-latest', 0],
    ['claude-sonnet-4-5', CLAUDE_ALLOWANCE_PERCENT],
    ['anthropic/claude-3-5-haiku-20241022', CLAUDE_ALLOWANCE_PERCENT],
    ['meta-llama/llama-3.3-70b-instruct', OTHER_ALLOWANCE_PERCENT],
    ['qwen3-coder', OTHER_ALLOWANCE_PERCENT],
    ['svc-demo-fast', OTHER_ALLOWANCE_PERCENT],
    ['ollama-model', OTHER_ALLOWANCE_PERCENT],
  ])('%s → %d', (serviceId, expected) => {
    expect(tokenizerAllowancePercent(serviceId)).toBe(expected);
  });

  it('claimToleranceFor: exact for units, the base without a service, widened by family', () => {
    const base = { percent: 10, slackTokens: 16 };
    expect(claimToleranceFor(base, { units: true, serviceId: 'img-1' })).toEqual({
      percent: 0,
      slackTokens: 0,
    });
    expect(claimToleranceFor(base, {})).toEqual(base);
    expect(claimToleranceFor(base, { serviceId: 'gpt-4o' })).toEqual(base);
    expect(claimToleranceFor(base, { serviceId: 'claude-opus-4' })).toEqual({
      percent: 10 + CLAUDE_ALLOWANCE_PERCENT,
      slackTokens: 16,
    });
  });
});
