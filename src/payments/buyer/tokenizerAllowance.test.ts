import { describe, expect, it } from 'vitest';
import {
  CLAUDE_ALLOWANCE_PERCENT,
  OTHER_ALLOWANCE_PERCENT,
  tokenizerAllowancePercent,
} from './tokenizerAllowance.js';

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
});
