/**
 * OpenAI responses wire format: the response object and its SSE event sequence
 * (created, in_progress, output_item.added, content_part.added, output_text.delta...,
 * output_text.done, content_part.done, output_item.done, completed), each with sequence_number.
 */
import { encodeSse } from './sse.js';
import { type AnswerSpec, textChunks } from './types.js';

function ids(spec: AnswerSpec) {
  const suffix = spec.id ?? 'svc0000000000000000000001';
  return { response: `resp_${suffix}`, message: `msg_${suffix}` };
}

function usageJson(spec: AnswerSpec) {
  const { inputTokens, cachedInputTokens, outputTokens } = spec.usage;
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: cachedInputTokens },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: spec.usage.reasoningTokens ?? 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

function messageItem(spec: AnswerSpec, text: string, status: 'in_progress' | 'completed') {
  return {
    id: ids(spec).message,
    type: 'message',
    status,
    role: 'assistant',
    content:
      status === 'completed' ? [{ type: 'output_text', text, annotations: [], logprobs: [] }] : [],
  };
}

function responseObject(spec: AnswerSpec, status: 'in_progress' | 'completed') {
  return {
    id: ids(spec).response,
    object: 'response',
    created_at: spec.created ?? Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: spec.model,
    output: status === 'completed' ? [messageItem(spec, spec.text, 'completed')] : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: status === 'completed' ? usageJson(spec) : null,
    user: null,
    metadata: {},
  };
}

/** A non-streaming response. */
export function responseJson(spec: AnswerSpec): Record<string, unknown> {
  return responseObject(spec, 'completed');
}

/** The SSE events of a streamed response. */
export function responseSse(spec: AnswerSpec): string[] {
  let sequence = 0;
  const event = (type: string, body: Record<string, unknown>) =>
    encodeSse({
      event: type,
      data: JSON.stringify({ type, sequence_number: sequence++, ...body }),
    });
  const itemId = ids(spec).message;
  const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
  const events = [
    event('response.created', { response: responseObject(spec, 'in_progress') }),
    event('response.in_progress', { response: responseObject(spec, 'in_progress') }),
    event('response.output_item.added', {
      output_index: 0,
      item: messageItem(spec, '', 'in_progress'),
    }),
    event('response.content_part.added', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part,
    }),
  ];
  for (const delta of textChunks(spec)) {
    events.push(
      event('response.output_text.delta', {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        delta,
        logprobs: [],
      }),
    );
  }
  events.push(
    event('response.output_text.done', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      text: spec.text,
      logprobs: [],
    }),
    event('response.content_part.done', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { ...part, text: spec.text },
    }),
    event('response.output_item.done', {
      output_index: 0,
      item: messageItem(spec, spec.text, 'completed'),
    }),
    event('response.completed', { response: responseObject(spec, 'completed') }),
  );
  return events;
}
