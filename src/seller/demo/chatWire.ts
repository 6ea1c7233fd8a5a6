/**
 * The demo answer in the chat-completions format: content and tool_calls, JSON or SSE (each
 * call's arguments streamed in several deltas after a chunk naming it), finish_reason
 * `tool_calls`, `stop` or `length`, and the usage chunk at the end.
 */
import { formatSse } from '../../formats/index.js';
import { type Answer, argumentPieces, words } from './answer.js';

function usageJson(answer: Answer) {
  const { inputTokens, cachedInputTokens, outputTokens } = answer.usage;
  return {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    prompt_tokens_details: { cached_tokens: cachedInputTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

const finishReason = (answer: Answer) =>
  answer.truncated ? 'length' : answer.calls.length > 0 ? 'tool_calls' : 'stop';

function base(answer: Answer, object: string) {
  return {
    id: `chatcmpl-${answer.id}`,
    object,
    created: answer.created,
    model: answer.model,
    system_fingerprint: 'fp_svc_demo',
  };
}

/** A non-streaming chat completion. */
export function chatJson(answer: Answer): Record<string, unknown> {
  const toolCalls = answer.calls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  return {
    ...base(answer, 'chat.completion'),
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.text,
          refusal: null,
          annotations: [],
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(answer),
      },
    ],
    usage: usageJson(answer),
    service_tier: 'default',
  };
}

/** The SSE events of a streamed chat completion (usage chunk included), ending with [DONE]. */
export function chatSse(answer: Answer): string[] {
  const head = base(answer, 'chat.completion.chunk');
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    formatSse({
      data: JSON.stringify({
        ...head,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        usage: null,
      }),
    });
  const events = [chunk({ role: 'assistant', content: '', refusal: null }, null)];
  for (const content of words(answer.text)) events.push(chunk({ content }, null));
  answer.calls.forEach((call, index) => {
    events.push(
      chunk(
        {
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
          ],
        },
        null,
      ),
    );
    for (const piece of argumentPieces(call.arguments)) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null));
    }
  });
  events.push(chunk({}, finishReason(answer)));
  events.push(
    formatSse({ data: JSON.stringify({ ...head, choices: [], usage: usageJson(answer) }) }),
  );
  events.push(formatSse({ data: '[DONE]' }));
  return events;
}
