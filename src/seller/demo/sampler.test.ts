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
    { weights },
  );
  return JSON.parse(answer.parts.join('')).choices[0].message.content;
}

const OPENING = /^[A-Z][a-z]+( [a-z]+){15}\. svc demo model/;

describe('demo model sampling', () => {
  it('samples at the vendors’ defaults when the request sets nothing: temperature 1, top_p 1', async () => {
    expect(samplingOf({})).toEqual({ temperature: 1, topP: 1, seed: undefined });
    expect(await text({})).toMatch(OPENING);
    const answers = new Set(await Promise.all(Array.from({ length: 20 }, () => text({}))));
    expect(answers.size).toBeGreaterThan(10);
  });

  it('is repeatable at temperature 0 and with a seed, as vendors are', async () => {
    expect(await text({ temperature: 0 })).toBe(await text({ temperature: 0 }));
    expect(await text({ temperature: 1, seed: 5 })).toBe(await text({ temperature: 1, seed: 5 }));
    expect(await text({ temperature: 1, seed: 5 })).not.toBe(
      await text({ temperature: 1, seed: 6 }),
    );
    expect(await text({ temperature: 0 })).toMatch(OPENING);
  });

  it('honours top_p: a tiny nucleus keeps only the most likely word', async () => {
    const greedy = await text({ temperature: 0 });
    for (let i = 0; i < 5; i++) expect(await text({ top_p: 0.000001 })).toBe(greedy);
  });

  it("answers from its weights: another model's weights give other words", async () => {
    expect(await text({ temperature: 0 }, 'svc-demo-fast')).not.toBe(
      await text({ temperature: 0 }),
    );
    const sampling = { temperature: 0, topP: 1, seed: undefined };
    expect(sampleWords('a', PROMPT, sampling)).not.toEqual(sampleWords('b', PROMPT, sampling));
  });

  it('ignores sampling settings out of range or of the wrong type', () => {
    expect(samplingOf({ temperature: 'hot', top_p: 7, seed: 1.5 })).toEqual({
      temperature: 1,
      topP: 1,
      seed: undefined,
    });
    expect(samplingOf({ temperature: 9, top_p: 0.5, seed: 3 })).toEqual({
      temperature: 2,
      topP: 0.5,
      seed: 3,
    });
  });
});
