import { describe, expect, it } from 'vitest';
import { cleanModelName, closestModelNames, normalizeModelName } from './normalizeModelName.js';

/** Groups of real model names: every name in a group must share one key; groups stay apart. */
const SAME: string[][] = [
  ['claude-sonnet-4-20250514', 'anthropic/claude-sonnet-4', 'Claude-Sonnet-4', 'claude_sonnet_4'],
  [
    'claude-3-5-sonnet-20241022',
    'claude-3.5-sonnet',
    'anthropic.claude-3-5-sonnet-20241022-v2:0',
    'claude-3-5-sonnet@20240620',
    'claude-3-5-sonnet-latest',
  ],
  ['claude-opus-4-1-20250805', 'anthropic/claude-opus-4.1', 'claude-opus-4.1'],
  ['claude-3-5-haiku-20241022', 'claude-3.5-haiku'],
  ['gpt-4o-2024-08-06', 'openai/gpt-4o', 'GPT-4o', 'gpt4o'],
  ['gpt-4o-mini-2024-07-18', 'openai/gpt-4o-mini', 'gpt-4o_mini'],
  ['gpt-4.1-2025-04-14', 'openai/gpt-4.1', 'gpt-4-1'],
  ['gpt-4.1-mini', 'openai/gpt-4.1-mini-2025-04-14'],
  ['o3-mini-2025-01-31', 'openai/o3-mini', 'o3-mini'],
  ['o1-2024-12-17', 'o1'],
  [
    'meta-llama/Llama-3.1-8B-Instruct',
    'llama-3.1-8b-instruct',
    'meta-llama/llama-3.1-8b-instruct:free',
  ],
  ['meta-llama/Llama-3.3-70B-Instruct', 'llama-3.3-70b-instruct'],
  ['deepseek/deepseek-r1', 'deepseek-r1', 'DeepSeek-R1'],
  ['deepseek-ai/DeepSeek-V3', 'deepseek-v3'],
  ['google/gemini-2.5-pro', 'gemini-2.5-pro', 'gemini-2-5-pro'],
  ['google/gemini-2.0-flash-001', 'gemini-2.0-flash-001'],
  ['mistralai/mistral-large-2411', 'mistral-large-2411'],
  ['qwen/qwen-2.5-72b-instruct', 'Qwen-2.5-72B-Instruct'],
  ['x-ai/grok-3', 'grok-3'],
  ['dall-e-3', 'openai/dall-e-3'],
];

/** Pairs that look alike but are different models. */
const DIFFERENT: Array<[string, string]> = [
  ['gpt-4o', 'gpt-4o-mini'],
  ['gpt-4', 'gpt-4.1'],
  ['gpt-4.1', 'gpt-4.1-mini'],
  ['gpt-4.1-mini', 'gpt-4.1-nano'],
  ['gemini-2.5-pro', 'gemini-2.5-flash'],
  ['claude-sonnet-4', 'claude-sonnet-4-thinking'],
  ['claude-3-7-sonnet-20250219', 'claude-3-7-sonnet-20250219-thinking'],
  ['claude-opus-4', 'claude-opus-4.1'],
  ['o3', 'o3-mini'],
  ['o3', 'o3-pro'],
  ['o1', 'o1-mini'],
  ['mistral-large-2407', 'mistral-large-2411'],
  ['llama-3.1-8b-instruct', 'llama-3.1-70b-instruct'],
  ['llama-3.1-8b-instruct', 'llama-3.1-8b'],
  ['llama-3-1-8b', 'llama-3-18b'],
  ['deepseek-r1', 'deepseek-r1-distill-llama-70b'],
  ['gpt-3.5-turbo', 'gpt-4-turbo'],
  ['gpt-image-1', 'dall-e-3'],
  ['grok-3', 'grok-3-mini'],
  ['gemini-2.0-flash', 'gemini-2.0-flash-lite'],
];

describe('normalizeModelName', () => {
  const allNames = [...SAME.flat(), ...DIFFERENT.flat()];

  it('covers at least 40 real model names', () => {
    expect(new Set(allNames).size).toBeGreaterThanOrEqual(40);
  });

  it.each(SAME.map((group) => [group[0]!, group] as const))(
    '%s: variants share a key',
    (_, group) => {
      const keys = new Set(group.map(normalizeModelName));
      expect([...keys]).toHaveLength(1);
    },
  );

  it('keeps the groups apart from each other', () => {
    const keys = SAME.map((group) => normalizeModelName(group[0]!));
    expect(new Set(keys).size).toBe(SAME.length);
  });

  it.each(DIFFERENT)('%s and %s stay distinct', (a, b) => {
    expect(normalizeModelName(a)).not.toBe(normalizeModelName(b));
  });

  it('cleans names to a readable form', () => {
    expect(cleanModelName('anthropic/claude-sonnet-4-20250514')).toBe('claude-sonnet-4');
    expect(cleanModelName('openai/gpt-4o-2024-08-06')).toBe('gpt-4o');
    expect(cleanModelName('GPT-4.1')).toBe('gpt-4.1');
    expect(normalizeModelName('claude-3-7-sonnet-20250219-thinking')).toBe(
      'claude-3-7-sonnet-thinking',
    );
  });

  it('suggests close names', () => {
    expect(closestModelNames('gpt-4o-mni', ['gpt-4o-mini', 'claude-sonnet-4', 'o3'])).toEqual([
      'gpt-4o-mini',
    ]);
    expect(closestModelNames('totally-unknown-thing', ['o3'])).toEqual([]);
  });
});
