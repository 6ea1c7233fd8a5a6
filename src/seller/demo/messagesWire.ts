/**
 * The demo answer in the Anthropic messages format: thinking, text and tool_use blocks, JSON or
 * SSE (tool input streamed as several input_json_delta events), stop_reason `tool_use`,
 * `end_turn` or `max_tokens`, cache reads apart from input_tokens.
 */
import { formatSse } from '../../formats/index.js';
import { type Answer, argumentPieces, words } from './answer.js';

function usageJson(answer: Answer, outputTokens: number) {
  const { inputTokens, cachedInputTokens } = answer.usage;
  return {
    input_tokens: inputTokens - cachedInputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cachedInputTokens,
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

const stopReason = (answer: Answer) =>
  answer.truncated ? 'max_tokens' : answer.calls.length > 0 ? 'tool_use' : 'end_turn';

function blocks(answer: Answer): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (answer.reasoning !== undefined) {
    out.push({ type: 'thinking', thinking: answer.reasoning, signature: answer.reasoningToken });
  }
  out.push({ type: 'text', text: answer.text });
  for (const call of answer.calls) {
    out.push({ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.arguments) });
  }
  return out;
}

function message(answer: Answer, done: boolean) {
  return {
    id: `msg_${answer.id}`,
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content: done ? blocks(answer) : [],
    stop_reason: done ? stopReason(answer) : null,
    stop_sequence: null,
    usage: usageJson(answer, done ? answer.usage.outputTokens : 1),
  };
}

/** A non-streaming message. */
export function messagesJson(answer: Answer): Record<string, unknown> {
  return message(answer, true);
}

/** The SSE events of a streamed message. */
export function messagesSse(answer: Answer): string[] {
  const event = (type: string, body: Record<string, unknown>) =>
    formatSse({ event: type, data: JSON.stringify({ type, ...body }) });
  const events = [event('message_start', { message: message(answer, false) }), event('ping', {})];
  let index = 0;
  const block = (start: Record<string, unknown>, deltas: Record<string, unknown>[]) => {
    events.push(event('content_block_start', { index, content_block: start }));
    for (const delta of deltas) events.push(event('content_block_delta', { index, delta }));
    events.push(event('content_block_stop', { index }));
    index++;
  };
  if (answer.reasoning !== undefined) {
    block({ type: 'thinking', thinking: '', signature: '' }, [
      ...words(answer.reasoning).map((thinking) => ({ type: 'thinking_delta', thinking })),
      { type: 'signature_delta', signature: answer.reasoningToken },
    ]);
  }
  block(
    { type: 'text', text: '' },
    words(answer.text).map((text) => ({ type: 'text_delta', text })),
  );
  for (const call of answer.calls) {
    block(
      { type: 'tool_use', id: call.id, name: call.name, input: {} },
      argumentPieces(call.arguments).map((partial_json) => ({
        type: 'input_json_delta',
        partial_json,
      })),
    );
  }
  events.push(
    event('message_delta', {
      delta: { stop_reason: stopReason(answer), stop_sequence: null },
      usage: { output_tokens: answer.usage.outputTokens },
    }),
    event('message_stop', {}),
  );
  return events;
}
