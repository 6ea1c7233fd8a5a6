/** Responses non-streaming response <-> internal response, and responses usage mapping. */
import type {
  Response,
  ResponseOutputItem,
  ResponseUsage,
} from 'openai/resources/responses/responses';
import { badSeller, isRecord, newId } from '../check.js';
import type { ModelResponse, Usage } from '../model.js';
import { emptyUsage } from '../model.js';
import { responsesEndOf, stopOfResponses } from '../reasons.js';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Internal usage of a responses `usage` object (input_tokens include cached tokens). */
export function usageOfResponses(raw: unknown): Usage {
  if (!isRecord(raw)) return emptyUsage();
  const usage: Usage = {
    inputTokens: num(raw.input_tokens),
    cachedInputTokens: isRecord(raw.input_tokens_details)
      ? num(raw.input_tokens_details.cached_tokens)
      : 0,
    cacheCreationInputTokens: isRecord(raw.input_tokens_details)
      ? num(raw.input_tokens_details.cache_write_tokens)
      : 0,
    outputTokens: num(raw.output_tokens),
  };
  if (
    isRecord(raw.output_tokens_details) &&
    typeof raw.output_tokens_details.reasoning_tokens === 'number'
  ) {
    usage.reasoningTokens = raw.output_tokens_details.reasoning_tokens;
  }
  return usage;
}

/** A responses `usage` object of internal usage. */
export function responsesUsageOf(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: {
      cached_tokens: usage.cachedInputTokens,
      cache_write_tokens: usage.cacheCreationInputTokens,
    },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** Parses a seller's response object (502 invalid_seller_response when malformed). */
export function parseResponsesResponse(body: unknown): ModelResponse {
  if (!isRecord(body) || !Array.isArray(body.output)) throw badSeller('response without output');
  const parts: ModelResponse['parts'] = [];
  let refusal = false;
  for (const item of body.output) {
    if (!isRecord(item)) throw badSeller('output item is not an object');
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const c of item.content) {
        if (!isRecord(c)) continue;
        if (c.type === 'output_text' && typeof c.text === 'string')
          parts.push({ type: 'text', text: c.text });
        else if (c.type === 'refusal' && typeof c.refusal === 'string') {
          refusal = true;
          parts.push({ type: 'text', text: c.refusal });
        }
      }
    } else if (item.type === 'function_call') {
      if (typeof item.name !== 'string') throw badSeller('function_call without a name');
      parts.push({
        type: 'tool_call',
        id: typeof item.call_id === 'string' ? item.call_id : '',
        name: item.name,
        arguments: typeof item.arguments === 'string' ? item.arguments : '{}',
      });
    } else if (item.type === 'reasoning') {
      const texts = [
        ...(Array.isArray(item.summary) ? item.summary : []),
        ...(Array.isArray(item.content) ? item.content : []),
      ]
        .map((s) => (isRecord(s) && typeof s.text === 'string' ? s.text : ''))
        .filter(Boolean);
      if (texts.length > 0) parts.push({ type: 'reasoning', text: texts.join('\n') });
    }
  }
  if (body.status === 'failed') throw badSeller('response status is failed');
  const incomplete = isRecord(body.incomplete_details) ? body.incomplete_details.reason : undefined;
  const stop = stopOfResponses(
    body.status as string,
    incomplete as string,
    parts.some((p) => p.type === 'tool_call'),
  );
  return {
    id: typeof body.id === 'string' ? body.id : '',
    model: typeof body.model === 'string' ? body.model : '',
    created: typeof body.created_at === 'number' ? body.created_at : Math.floor(Date.now() / 1000),
    parts,
    stopReason: refusal && stop === 'end_turn' ? 'refusal' : stop,
    usage: usageOfResponses(body.usage),
  };
}

/** Output items of an internal response. */
export function responsesOutputOf(resp: ModelResponse): ResponseOutputItem[] {
  const output: ResponseOutputItem[] = [];
  let text = '';
  const flush = () => {
    if (!text) return;
    output.push({
      type: 'message',
      id: newId('msg_'),
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    });
    text = '';
  };
  for (const part of resp.parts) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'reasoning') {
      flush();
      output.push({
        type: 'reasoning',
        id: newId('rs_'),
        summary: [{ type: 'summary_text', text: part.text }],
      });
    } else {
      flush();
      output.push({
        type: 'function_call',
        id: newId('fc_'),
        call_id: part.id,
        name: part.name,
        arguments: part.arguments,
        status: 'completed',
      });
    }
  }
  flush();
  return output;
}

/** A full response object; `output` and `usage` omitted for in-progress events. */
export function responsesEnvelope(
  id: string,
  model: string,
  createdAt: number,
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed',
  output: ResponseOutputItem[],
): Response {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: null,
    model,
    output,
    output_text: '',
    parallel_tool_calls: true,
    temperature: null,
    tool_choice: 'auto',
    tools: [],
    top_p: null,
  };
}

/** Renders an internal response as a responses object. */
export function renderResponsesResponse(resp: ModelResponse, id: string): Response {
  const end = responsesEndOf(resp.stopReason);
  const out = responsesEnvelope(id, resp.model, resp.created, end.status, responsesOutputOf(resp));
  if (end.incomplete) out.incomplete_details = { reason: end.incomplete };
  out.output_text = resp.parts
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('');
  out.usage = responsesUsageOf(resp.usage);
  return out;
}
