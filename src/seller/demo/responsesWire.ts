/**
 * The demo answer in the responses format: a reasoning item (summary + encrypted content), a
 * message item and function_call items, JSON or SSE (arguments streamed as several
 * function_call_arguments.delta events), with sequence numbers.
 */
import { formatSse } from '../../formats/index.js';
import { type Answer, argumentPieces, words } from './answer.js';

type Json = Record<string, unknown>;

function usageJson(answer: Answer) {
  const { inputTokens, cachedInputTokens, outputTokens } = answer.usage;
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: cachedInputTokens },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: answer.usage.reasoningTokens ?? 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

/** `incomplete` when the answer stopped at `max_output_tokens`, as the vendor reports it. */
const finalStatus = (answer: Answer) => (answer.truncated ? 'incomplete' : 'completed');

function reasoningItem(answer: Answer, done: boolean): Json {
  return {
    id: `rs_${answer.id}`,
    type: 'reasoning',
    summary: done ? [{ type: 'summary_text', text: answer.reasoning ?? '' }] : [],
    encrypted_content: answer.reasoningToken,
  };
}

function messageItem(answer: Answer, done: boolean): Json {
  return {
    id: `msg_${answer.id}`,
    type: 'message',
    status: done ? finalStatus(answer) : 'in_progress',
    role: 'assistant',
    content: done
      ? [{ type: 'output_text', text: answer.text, annotations: [], logprobs: [] }]
      : [],
  };
}

function callItem(answer: Answer, index: number, done: boolean): Json {
  const call = answer.calls[index]!;
  return {
    id: `fc_${answer.id}${index}`,
    type: 'function_call',
    status: done ? 'completed' : 'in_progress',
    call_id: call.id,
    name: call.name,
    arguments: done ? call.arguments : '',
  };
}

function outputItems(answer: Answer): Json[] {
  return [
    ...(answer.reasoning !== undefined ? [reasoningItem(answer, true)] : []),
    messageItem(answer, true),
    ...answer.calls.map((_, index) => callItem(answer, index, true)),
  ];
}

function responseObject(answer: Answer, done: boolean): Json {
  return {
    id: `resp_${answer.id}`,
    object: 'response',
    created_at: answer.created,
    status: done ? finalStatus(answer) : 'in_progress',
    error: null,
    incomplete_details: done && answer.truncated ? { reason: 'max_output_tokens' } : null,
    instructions: null,
    max_output_tokens: null,
    model: answer.model,
    output: done ? outputItems(answer) : [],
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
    usage: done ? usageJson(answer) : null,
    user: null,
    metadata: {},
  };
}

/** A non-streaming response. */
export function responsesJson(answer: Answer): Json {
  return responseObject(answer, true);
}

/** The SSE events of a streamed response. */
export function responsesSse(answer: Answer): string[] {
  let sequence = 0;
  const events: string[] = [];
  const event = (type: string, body: Json) =>
    events.push(
      formatSse({
        event: type,
        data: JSON.stringify({ type, sequence_number: sequence++, ...body }),
      }),
    );
  event('response.created', { response: responseObject(answer, false) });
  event('response.in_progress', { response: responseObject(answer, false) });
  let output_index = 0;
  if (answer.reasoning !== undefined) {
    const item_id = `rs_${answer.id}`;
    const part = { type: 'summary_text', text: '' };
    event('response.output_item.added', { output_index, item: reasoningItem(answer, false) });
    event('response.reasoning_summary_part.added', {
      item_id,
      output_index,
      summary_index: 0,
      part,
    });
    for (const delta of words(answer.reasoning)) {
      event('response.reasoning_summary_text.delta', {
        item_id,
        output_index,
        summary_index: 0,
        delta,
      });
    }
    event('response.reasoning_summary_text.done', {
      item_id,
      output_index,
      summary_index: 0,
      text: answer.reasoning,
    });
    event('response.reasoning_summary_part.done', {
      item_id,
      output_index,
      summary_index: 0,
      part: { ...part, text: answer.reasoning },
    });
    event('response.output_item.done', { output_index, item: reasoningItem(answer, true) });
    output_index++;
  }
  const item_id = `msg_${answer.id}`;
  const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
  const at = { item_id, output_index, content_index: 0 };
  event('response.output_item.added', { output_index, item: messageItem(answer, false) });
  event('response.content_part.added', { ...at, part });
  for (const delta of words(answer.text)) {
    event('response.output_text.delta', { ...at, delta, logprobs: [] });
  }
  event('response.output_text.done', { ...at, text: answer.text, logprobs: [] });
  event('response.content_part.done', { ...at, part: { ...part, text: answer.text } });
  event('response.output_item.done', { output_index, item: messageItem(answer, true) });
  output_index++;
  answer.calls.forEach((call, index) => {
    const callId = `fc_${answer.id}${index}`;
    event('response.output_item.added', { output_index, item: callItem(answer, index, false) });
    for (const delta of argumentPieces(call.arguments)) {
      event('response.function_call_arguments.delta', { item_id: callId, output_index, delta });
    }
    event('response.function_call_arguments.done', {
      item_id: callId,
      output_index,
      name: call.name,
      arguments: call.arguments,
    });
    event('response.output_item.done', { output_index, item: callItem(answer, index, true) });
    output_index++;
  });
  event(answer.truncated ? 'response.incomplete' : 'response.completed', {
    response: responseObject(answer, true),
  });
  return events;
}
