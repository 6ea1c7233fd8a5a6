/** Internal conversation -> chat-completions request. */
import type {
  ChatCompletionContentPart,
  ChatCompletionContentPartText,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions/completions';
import { unsupported, urlOfImageSource } from '../check.js';
import type { Conversation, TextPart, UserContent } from '../model.js';

/** Text of a tool result for formats without an error flag: errors are prefixed "Error: ". */
export function toolResultText(content: UserContent[], isError?: boolean): string {
  const text = content
    .filter((p): p is TextPart => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
  return isError ? `Error: ${text}` : text;
}

function contentPart(part: UserContent): ChatCompletionContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  if (part.type === 'document') {
    const s = part.source;
    if (s.kind === 'text') return { type: 'text', text: s.text };
    if (s.kind === 'url') {
      throw unsupported('document', 'chat-completions cannot read a document by URL');
    }
    return {
      type: 'file',
      file: {
        file_data: `data:${s.mediaType};base64,${s.data}`,
        filename: part.filename ?? 'document.pdf',
      },
    };
  }
  return {
    type: 'image_url',
    image_url: {
      url: urlOfImageSource(part.source),
      ...(part.detail ? { detail: part.detail } : {}),
    },
  };
}

/** The longest `user` OpenAI accepts. */
export const OPENAI_USER_MAX_CHARS = 64;

/** Renders a chat-completions request (usage is always requested on streams). */
export function renderChatRequest(
  conv: Conversation,
  warnings: string[],
): ChatCompletionCreateParamsBase {
  const messages: ChatCompletionMessageParam[] = [];
  if (conv.system.length === 1) messages.push({ role: 'system', content: conv.system[0] ?? '' });
  else if (conv.system.length > 1) {
    messages.push({
      role: 'system',
      content: conv.system.map((text): ChatCompletionContentPartText => ({ type: 'text', text })),
    });
  }
  for (const turn of conv.turns) {
    if (turn.role === 'assistant') {
      let text = '';
      const calls: ChatCompletionMessageToolCall[] = [];
      let reasoningDropped = false;
      for (const part of turn.parts) {
        if (part.type === 'text') text += part.text;
        else if (part.type === 'tool_call') {
          calls.push({
            id: part.id,
            type: 'function',
            function: { name: part.name, arguments: part.arguments },
          });
        } else if (part.type === 'reasoning') reasoningDropped = true;
      }
      if (reasoningDropped) warnings.push('reasoning in earlier assistant turns dropped');
      messages.push({
        role: 'assistant',
        content: text.length > 0 || calls.length === 0 ? text : null,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      });
      continue;
    }
    // User turn: tool results first (one tool message each), then the rest as one user message.
    const rest: UserContent[] = [];
    for (const part of turn.parts) {
      if (part.type === 'tool_result') {
        messages.push({
          role: 'tool',
          tool_call_id: part.callId,
          content: toolResultText(part.content, part.isError),
        });
        const media = part.content.filter((p) => p.type !== 'text');
        if (media.length > 0) {
          warnings.push('images and documents in tool results moved to the following user message');
          rest.push(...media);
        }
      } else if (part.type === 'text' || part.type === 'image' || part.type === 'document')
        rest.push(part);
    }
    if (rest.length === 0) continue;
    const only = rest[0];
    messages.push({
      role: 'user',
      content: rest.length === 1 && only?.type === 'text' ? only.text : rest.map(contentPart),
    });
  }

  const out: ChatCompletionCreateParamsBase = { model: conv.model, messages };
  if (conv.tools.length > 0) {
    out.tools = conv.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.parameters,
        ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
      },
    }));
  }
  if (conv.toolChoice) {
    out.tool_choice =
      conv.toolChoice.type === 'tool'
        ? { type: 'function', function: { name: conv.toolChoice.name } }
        : conv.toolChoice.type;
  }
  if (conv.parallelToolCalls !== undefined) out.parallel_tool_calls = conv.parallelToolCalls;
  if (conv.maxOutputTokens !== undefined) out.max_completion_tokens = conv.maxOutputTokens;
  if (conv.temperature !== undefined) out.temperature = conv.temperature;
  if (conv.topP !== undefined) out.top_p = conv.topP;
  if (conv.topK !== undefined) warnings.push('top_k dropped');
  if (conv.seed !== undefined) out.seed = conv.seed;
  if (conv.stop !== undefined) {
    if (conv.stop.length > 4) warnings.push('stop sequences beyond the first 4 dropped');
    out.stop = conv.stop.slice(0, 4);
  }
  if (conv.outputFormat) {
    const f = conv.outputFormat;
    out.response_format =
      f.type === 'json_schema'
        ? {
            type: 'json_schema',
            json_schema: {
              name: f.name,
              schema: f.schema,
              ...(f.strict !== undefined ? { strict: f.strict } : {}),
              ...(f.description !== undefined ? { description: f.description } : {}),
            },
          }
        : { type: f.type };
  }
  if (conv.reasoning?.enabled)
    out.reasoning_effort = conv.reasoning.effort ?? effortOfBudget(conv.reasoning.budgetTokens);
  if (conv.user !== undefined) {
    // OpenAI refuses a `user` longer than 64 characters (Claude Code's user ids are longer).
    if (conv.user.length <= OPENAI_USER_MAX_CHARS) out.user = conv.user;
    else warnings.push('user dropped (longer than 64 characters)');
  }
  if (conv.metadata !== undefined) out.metadata = conv.metadata;
  if (conv.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  return out;
}

/** An OpenAI effort for an Anthropic thinking budget (documented in decision 020). */
export function effortOfBudget(budget: number | undefined): 'low' | 'medium' | 'high' {
  if (budget === undefined || budget <= 4096) return 'low';
  if (budget <= 16384) return 'medium';
  return 'high';
}
