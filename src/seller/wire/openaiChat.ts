/**
 * OpenAI chat completions wire format: the JSON response and the SSE chunk sequence
 * (role chunk, content deltas, finish chunk, optional usage chunk with `choices: []`, [DONE]).
 */
import { encodeSse } from './sse.js';
import { type AnswerSpec, textChunks } from './types.js';

function usageJson(spec: AnswerSpec) {
  const { inputTokens, cachedInputTokens, outputTokens } = spec.usage;
  return {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    prompt_tokens_details: { cached_tokens: cachedInputTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: spec.usage.reasoningTokens ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function base(spec: AnswerSpec, object: string) {
  return {
    id: `chatcmpl-${spec.id ?? 'svc0000000000000000000001'}`,
    object,
    created: spec.created ?? Math.floor(Date.now() / 1000),
    model: spec.model,
    system_fingerprint: 'fp_svc_demo',
  };
}

/** A non-streaming chat completion. */
export function chatCompletionJson(spec: AnswerSpec): Record<string, unknown> {
  return {
    ...base(spec, 'chat.completion'),
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: spec.text, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: usageJson(spec),
    service_tier: 'default',
  };
}

/** The SSE events of a streamed chat completion, ending with `data: [DONE]`. */
export function chatCompletionSse(spec: AnswerSpec, options: { includeUsage: boolean }): string[] {
  const head = base(spec, 'chat.completion.chunk');
  const usage = options.includeUsage ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    encodeSse({
      data: JSON.stringify({
        ...head,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...usage,
      }),
    });
  const events = [chunk({ role: 'assistant', content: '', refusal: null }, null)];
  for (const piece of textChunks(spec)) events.push(chunk({ content: piece }, null));
  events.push(chunk({}, 'stop'));
  if (options.includeUsage) {
    events.push(
      encodeSse({ data: JSON.stringify({ ...head, choices: [], usage: usageJson(spec) }) }),
    );
  }
  events.push(encodeSse({ data: '[DONE]' }));
  return events;
}
