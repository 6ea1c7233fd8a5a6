/** Messages non-streaming response <-> internal response, and messages usage mapping. */
import type {
  Message,
  Usage as MessagesUsage,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { badSeller, isRecord } from '../check.js';
import type { ModelResponse, Usage } from '../model.js';
import { emptyUsage } from '../model.js';
import { messagesStopOf, stopOfMessages } from '../reasons.js';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * Internal usage of a messages `usage` object. Anthropic's input_tokens EXCLUDES cache reads and
 * cache writes, so the total input is the sum of the three.
 */
export function usageOfMessages(raw: unknown): Usage {
  if (!isRecord(raw)) return emptyUsage();
  const cached = num(raw.cache_read_input_tokens);
  const creation = num(raw.cache_creation_input_tokens);
  return {
    inputTokens: num(raw.input_tokens) + cached + creation,
    cachedInputTokens: cached,
    cacheCreationInputTokens: creation,
    outputTokens: num(raw.output_tokens),
  };
}

/** A messages `usage` object of internal usage (input_tokens without cached/creation tokens). */
export function messagesUsageOf(
  usage: Usage,
): Pick<
  MessagesUsage,
  'input_tokens' | 'output_tokens' | 'cache_read_input_tokens' | 'cache_creation_input_tokens'
> {
  return {
    input_tokens: Math.max(
      0,
      usage.inputTokens - usage.cachedInputTokens - usage.cacheCreationInputTokens,
    ),
    cache_creation_input_tokens: usage.cacheCreationInputTokens,
    cache_read_input_tokens: usage.cachedInputTokens,
    output_tokens: usage.outputTokens,
  };
}

/** Parses a seller's message (502 invalid_seller_response when malformed). */
export function parseMessagesResponse(body: unknown): ModelResponse {
  if (!isRecord(body) || !Array.isArray(body.content)) throw badSeller('message without content');
  const parts: ModelResponse['parts'] = [];
  for (const block of body.content) {
    if (!isRecord(block)) throw badSeller('content block is not an object');
    if (block.type === 'text' && typeof block.text === 'string')
      parts.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use' && typeof block.name === 'string') {
      parts.push({
        type: 'tool_call',
        id: typeof block.id === 'string' ? block.id : '',
        name: block.name,
        arguments: JSON.stringify(block.input ?? {}),
      });
    } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      parts.push({
        type: 'reasoning',
        text: block.thinking,
        ...(typeof block.signature === 'string' ? { signature: block.signature } : {}),
      });
    }
  }
  return {
    id: typeof body.id === 'string' ? body.id : '',
    model: typeof body.model === 'string' ? body.model : '',
    created: Math.floor(Date.now() / 1000),
    parts,
    stopReason: stopOfMessages(body.stop_reason as string),
    stopSequence: typeof body.stop_sequence === 'string' ? body.stop_sequence : null,
    usage: usageOfMessages(body.usage),
  };
}

/** Parses tool-call arguments for a tool_use block; invalid JSON is kept as a string field. */
export function inputOfArguments(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(args);
    return isRecord(value) ? value : { _raw_arguments: args };
  } catch {
    return { _raw_arguments: args };
  }
}

/** Renders an internal response as a message. */
export function renderMessagesResponse(resp: ModelResponse, id: string): Message {
  const content: Message['content'] = [];
  for (const part of resp.parts) {
    if (part.type === 'text') content.push({ type: 'text', text: part.text, citations: null });
    else if (part.type === 'reasoning') {
      content.push({ type: 'thinking', thinking: part.text, signature: part.signature ?? '' });
    } else {
      content.push({
        type: 'tool_use',
        id: part.id,
        name: part.name,
        input: inputOfArguments(part.arguments),
        caller: { type: 'direct' },
      } as Message['content'][number]);
    }
  }
  const usage = {
    ...messagesUsageOf(resp.usage),
    cache_creation: null,
    inference_geo: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: null,
    speed: null,
  };
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: resp.model,
    content,
    stop_reason: messagesStopOf(resp.stopReason),
    stop_sequence: resp.stopSequence ?? null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage,
  };
}
