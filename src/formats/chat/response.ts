/** Chat-completions non-streaming response <-> internal response, and chat usage mapping. */
import type { ChatCompletion } from 'openai/resources/chat/completions/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import { badSeller, isRecord } from '../check.js';
import type { ModelResponse, ToolCallPart, Usage } from '../model.js';
import { emptyUsage } from '../model.js';
import { chatFinishOf, stopOfChat } from '../reasons.js';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Internal usage of a chat `usage` object (prompt_tokens include cached tokens). */
export function usageOfChat(raw: unknown): Usage {
  if (!isRecord(raw)) return emptyUsage();
  const usage: Usage = {
    inputTokens: num(raw.prompt_tokens),
    cachedInputTokens: isRecord(raw.prompt_tokens_details)
      ? num(raw.prompt_tokens_details.cached_tokens)
      : 0,
    cacheCreationInputTokens: isRecord(raw.prompt_tokens_details)
      ? num(raw.prompt_tokens_details.cache_write_tokens)
      : 0,
    outputTokens: num(raw.completion_tokens),
  };
  if (
    isRecord(raw.completion_tokens_details) &&
    typeof raw.completion_tokens_details.reasoning_tokens === 'number'
  ) {
    usage.reasoningTokens = raw.completion_tokens_details.reasoning_tokens;
  }
  return usage;
}

/** A chat `usage` object of internal usage. */
export function chatUsageOf(usage: Usage): CompletionUsage {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: {
      cached_tokens: usage.cachedInputTokens,
      ...(usage.cacheCreationInputTokens
        ? { cache_write_tokens: usage.cacheCreationInputTokens }
        : {}),
    },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
  };
}

/** Parses a seller's chat completion (502 invalid_seller_response when malformed). */
export function parseChatResponse(body: unknown): ModelResponse {
  if (!isRecord(body) || !Array.isArray(body.choices))
    throw badSeller('chat completion without choices');
  const choice = body.choices[0];
  if (!isRecord(choice) || !isRecord(choice.message))
    throw badSeller('chat completion without a message');
  const msg = choice.message;
  const parts: ModelResponse['parts'] = [];
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning)
    parts.push({ type: 'reasoning', text: reasoning });
  if (typeof msg.content === 'string' && msg.content)
    parts.push({ type: 'text', text: msg.content });
  if (typeof msg.refusal === 'string' && msg.refusal)
    parts.push({ type: 'text', text: msg.refusal });
  if (Array.isArray(msg.tool_calls)) {
    for (const call of msg.tool_calls) {
      if (!isRecord(call) || !isRecord(call.function) || typeof call.function.name !== 'string') {
        throw badSeller('tool call without a function name');
      }
      const part: ToolCallPart = {
        type: 'tool_call',
        id: typeof call.id === 'string' ? call.id : '',
        name: call.function.name,
        arguments: typeof call.function.arguments === 'string' ? call.function.arguments : '{}',
      };
      parts.push(part);
    }
  }
  const hasCalls = parts.some((p) => p.type === 'tool_call');
  const stopReason =
    typeof msg.refusal === 'string' && msg.refusal
      ? 'refusal'
      : stopOfChat(choice.finish_reason as string, hasCalls);
  return {
    id: typeof body.id === 'string' ? body.id : '',
    model: typeof body.model === 'string' ? body.model : '',
    created: typeof body.created === 'number' ? body.created : Math.floor(Date.now() / 1000),
    parts,
    stopReason,
    usage: usageOfChat(body.usage),
  };
}

/** Renders an internal response as a chat completion. */
export function renderChatResponse(resp: ModelResponse, id: string): ChatCompletion {
  const text = resp.parts
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('');
  const reasoning = resp.parts
    .filter((p) => p.type === 'reasoning')
    .map((p) => p.text)
    .join('');
  const calls = resp.parts.filter((p): p is ToolCallPart => p.type === 'tool_call');
  const message: ChatCompletion['choices'][number]['message'] & { reasoning_content?: string } = {
    role: 'assistant',
    content: text.length > 0 || calls.length === 0 ? text : null,
    refusal: null,
  };
  if (calls.length > 0) {
    message.tool_calls = calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  if (reasoning) message.reasoning_content = reasoning;
  return {
    id,
    object: 'chat.completion',
    created: resp.created,
    model: resp.model,
    choices: [{ index: 0, message, finish_reason: chatFinishOf(resp.stopReason), logprobs: null }],
    usage: chatUsageOf(resp.usage),
  };
}
