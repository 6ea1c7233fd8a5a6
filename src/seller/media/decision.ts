/**
 * The demo decision model behind a `systemone` provider without a baseUrl: a deterministic
 * answer to a typed question (decision 093 defines the body). With `options`, it picks the
 * option sharing the most words with the question (first on ties); without, "yes" or "no".
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { SvcError } from '../../errors/index.js';

export const systemoneRequestSchema = z.object({
  model: z.string().min(1),
  question: z.string().min(1).max(100_000),
  options: z.array(z.string().min(1)).min(2).max(100).optional(),
});

export type SystemoneRequest = z.infer<typeof systemoneRequestSchema>;

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);
}

/** Parses a systemone body; 400 `invalid_request` naming the field otherwise. */
export function parseSystemone(body: unknown): SystemoneRequest {
  const parsed = systemoneRequestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SvcError('invalid_request', {
      message: `Invalid systemone request: ${issue?.path.join('.') || 'body'}: ${issue?.message}. Send {"model", "question", "options"?: [two or more strings]}.`,
    });
  }
  return parsed.data;
}

/** The demo's answer object. */
export function demoDecision(request: SystemoneRequest, model: string): Record<string, unknown> {
  const asked = words(request.question);
  let answer: string;
  if (request.options) {
    let best = request.options[0]!;
    let bestScore = -1;
    for (const option of request.options) {
      const score = [...words(option)].filter((word) => asked.has(word)).length;
      if (score > bestScore) {
        best = option;
        bestScore = score;
      }
    }
    answer = best;
  } else {
    const digest = createHash('sha256').update(request.question).digest();
    answer = digest[0]! % 2 === 0 ? 'yes' : 'no';
  }
  const inputTokens = Math.max(1, Math.ceil(request.question.length / 4));
  return {
    id: `so_${createHash('sha256').update(request.question).digest('hex').slice(0, 24)}`,
    object: 'systemone.decision',
    model,
    question: request.question,
    answer,
    ...(request.options ? { options: request.options } : {}),
    usage: { input_tokens: inputTokens, output_tokens: 1 },
  };
}
