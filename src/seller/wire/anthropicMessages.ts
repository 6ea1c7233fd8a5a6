/**
 * Anthropic messages wire format: the message object and its SSE sequence (message_start with
 * input usage, content_block_start, ping, content_block_delta..., content_block_stop,
 * message_delta with cumulative output usage, message_stop).
 */
import { encodeSse } from './sse.js';
import { type AnswerSpec, textChunks } from './types.js';

/** Anthropic counts cached reads apart from `input_tokens`; our `inputTokens` includes them. */
function usageJson(spec: AnswerSpec, outputTokens: number) {
  const { inputTokens, cachedInputTokens } = spec.usage;
  return {
    input_tokens: inputTokens - cachedInputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cachedInputTokens,
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

function message(spec: AnswerSpec, done: boolean) {
  return {
    id: `msg_${spec.id ?? 'svc0000000000000000000001'}`,
    type: 'message',
    role: 'assistant',
    model: spec.model,
    content: done ? [{ type: 'text', text: spec.text }] : [],
    stop_reason: done ? 'end_turn' : null,
    stop_sequence: null,
    usage: usageJson(spec, done ? spec.usage.outputTokens : 1),
  };
}

/** A non-streaming message. */
export function messageJson(spec: AnswerSpec): Record<string, unknown> {
  return message(spec, true);
}

/** The SSE events of a streamed message. */
export function messageSse(spec: AnswerSpec): string[] {
  const event = (type: string, body: Record<string, unknown>) =>
    encodeSse({ event: type, data: JSON.stringify({ type, ...body }) });
  const events = [
    event('message_start', { message: message(spec, false) }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    event('ping', {}),
  ];
  for (const text of textChunks(spec)) {
    events.push(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }));
  }
  events.push(
    event('content_block_stop', { index: 0 }),
    event('message_delta', {
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: spec.usage.outputTokens },
    }),
    event('message_stop', {}),
  );
  return events;
}
