import { describe, expect, it } from 'vitest';
import { demoAnswer } from '../demo.js';
import { sampleWords, samplingOf } from './sampler.js';

const PROMPT = 'Describe a quiet harbor.';

async function text(body: Record<string, unknown>, weights = 'svc-demo-smart'): Promise<string> {
  const answer = await demoAnswer(
    'openai-chat-completions',
    'svc-demo-smart',
    { model: 'svc-demo-smart', messages: [{ role: 'user', content: PROMPT }], ...body },
    100,
    weights,
  );
  return JSON.parse(answer.parts.join('')).choices[0].message.content;
}

describe('demo model sampling', () => {
  it('adds no continuation when the request sets neither temperature nor seed', async () => {
    expect(samplingOf({})).toBeUndefined();
    expect(await text({})).not.toContain('Sampled:');
  });

  it('is deterministic at temperature 0 and with a seed', async () => {
    expect(await text({ temperature: 0 })).toBe(await text({ temperature: 0 }));
    expect(await text({ temperature: 1, seed: 5 })).toBe(await text({ temperature: 1, seed: 5 }));
    expect(await text({ temperature: 1, seed: 5 })).not.toBe(
      await text({ temperature: 1, seed: 6 }),
    );
    expect(await text({ temperature: 0 })).toMatch(/Sampled: (\w+ ){11}\w+\.$/);
  });

  it('varies at temperature 1 without a seed', async () => {
    const answers = new Set(
      await Promise.all(Array.from({ length: 20 }, () => text({ temperature: 1 }))),
    );
    expect(answers.size).toBeGreaterThan(10);
  });

  it("answers from its weights: another model's weights give other words", async () => {
    expect(await text({ temperature: 0 }, 'svc-demo-fast')).not.toBe(
      await text({ temperature: 0 }),
    );
    const sampling = { temperature: 0, seed: undefined };
    expect(sampleWords('a', PROMPT, sampling)).not.toEqual(sampleWords('b', PROMPT, sampling));
  });
});
