/** Internal conversation -> messages request. */
import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageCreateParamsBase,
  MessageParam,
  TextBlockParam,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { invalid } from '../check.js';
import type { Conversation, ImagePart, Part, TextPart } from '../model.js';

/**
 * max_tokens for a messages request whose source did not set one (messages requires it).
 * Documented in decision 020; large enough for long code answers, capped by the buyer's cost limit.
 */
export const DEFAULT_MAX_TOKENS = 8192;

/** Thinking budgets for OpenAI reasoning efforts (decision 020). */
export const BUDGET_OF_EFFORT = { minimal: 1024, low: 2048, medium: 8192, high: 24576 } as const;

function imageBlock(part: ImagePart): ImageBlockParam {
  const s = part.source;
  if (s.kind === 'url') return { type: 'image', source: { type: 'url', url: s.url } };
  return {
    type: 'image',
    source: { type: 'base64', media_type: s.mediaType as 'image/png', data: s.data },
  };
}

function block(part: Part, warnings: string[]): ContentBlockParam | undefined {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return imageBlock(part);
    case 'tool_call': {
      let input: unknown;
      try {
        input = part.arguments.trim() === '' ? {} : JSON.parse(part.arguments);
      } catch {
        throw invalid(
          'tool_calls.function.arguments',
          `arguments of tool call ${part.id} are not JSON`,
        );
      }
      return { type: 'tool_use', id: part.id, name: part.name, input };
    }
    case 'tool_result': {
      const content = part.content.map((c: TextPart | ImagePart) =>
        c.type === 'text'
          ? ({ type: 'text', text: c.text } satisfies TextBlockParam)
          : imageBlock(c),
      );
      const out: ToolResultBlockParam = { type: 'tool_result', tool_use_id: part.callId };
      const only = content[0];
      out.content = content.length === 1 && only?.type === 'text' ? only.text : content;
      if (part.isError) out.is_error = true;
      return out;
    }
    case 'reasoning':
      if (part.signature)
        return { type: 'thinking', thinking: part.text, signature: part.signature };
      warnings.push('reasoning in earlier assistant turns dropped');
      return undefined;
  }
}

/**
 * The messages request we send. The SDK's current types no longer list the sampling parameters,
 * but the API and Anthropic-compatible sellers still accept them, so they are declared here.
 */
export type MessagesRequestBody = MessageCreateParamsBase & {
  temperature?: number;
  top_p?: number;
  top_k?: number;
};

/** Renders a messages request; `max_tokens` defaults to DEFAULT_MAX_TOKENS. */
export function renderMessagesRequest(conv: Conversation, warnings: string[]): MessagesRequestBody {
  const messages: MessageParam[] = [];
  for (const turn of conv.turns) {
    // Tool results first, then the rest of the user's content, as the format requires.
    const ordered =
      turn.role === 'user'
        ? [
            ...turn.parts.filter((p) => p.type === 'tool_result'),
            ...turn.parts.filter((p) => p.type !== 'tool_result'),
          ]
        : turn.parts;
    const content: ContentBlockParam[] = [];
    for (const part of ordered) {
      const b = block(part, warnings);
      if (b) content.push(b);
    }
    if (content.length === 0) continue;
    const only = content[0];
    messages.push({
      role: turn.role,
      content: content.length === 1 && only?.type === 'text' ? only.text : content,
    });
  }
  if (messages[0]?.role === 'assistant') messages.unshift({ role: 'user', content: '(continue)' });
  const out: MessagesRequestBody = {
    model: conv.model,
    messages,
    max_tokens: conv.maxOutputTokens ?? DEFAULT_MAX_TOKENS,
  };
  if (conv.maxOutputTokens === undefined)
    warnings.push(`max_tokens defaulted to ${DEFAULT_MAX_TOKENS}`);
  if (conv.system.length === 1) out.system = conv.system[0] ?? '';
  else if (conv.system.length > 1) out.system = conv.system.map((text) => ({ type: 'text', text }));
  if (conv.tools.length > 0) {
    out.tools = conv.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      input_schema: { type: 'object', ...tool.parameters },
      ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
    }));
  }
  const disableParallel = conv.parallelToolCalls === false;
  if (conv.toolChoice || disableParallel) {
    const tc = conv.toolChoice ?? { type: 'auto' as const };
    const extra = disableParallel && tc.type !== 'none' ? { disable_parallel_tool_use: true } : {};
    out.tool_choice =
      tc.type === 'tool'
        ? { type: 'tool', name: tc.name, ...extra }
        : tc.type === 'required'
          ? { type: 'any', ...extra }
          : tc.type === 'none'
            ? { type: 'none' }
            : { type: 'auto', ...extra };
  }
  if (conv.temperature !== undefined) {
    if (conv.temperature > 1) warnings.push('temperature clamped to 1');
    out.temperature = Math.min(1, conv.temperature);
  }
  if (conv.topP !== undefined) out.top_p = conv.topP;
  if (conv.topK !== undefined) out.top_k = conv.topK;
  if (conv.seed !== undefined) warnings.push('seed dropped');
  if (conv.stop !== undefined) out.stop_sequences = conv.stop;
  if (conv.outputFormat) {
    const f = conv.outputFormat;
    if (f.type === 'json_schema')
      out.output_config = { format: { type: 'json_schema', schema: f.schema } };
    // json_object: OpenAI requires the prompt to ask for JSON already, so dropping it is harmless.
    else if (f.type === 'json_object') warnings.push('response_format json_object dropped');
  }
  if (conv.reasoning?.enabled && conv.reasoning.effort !== 'minimal') {
    const wanted =
      conv.reasoning.budgetTokens ?? BUDGET_OF_EFFORT[conv.reasoning.effort ?? 'medium'];
    const budget = Math.min(wanted, out.max_tokens - 1);
    if (budget >= 1024) out.thinking = { type: 'enabled', budget_tokens: budget };
    else warnings.push('reasoning dropped: max_tokens too small for a thinking budget');
  }
  if (conv.user !== undefined) out.metadata = { user_id: conv.user };
  if (conv.metadata !== undefined) warnings.push('metadata dropped (only the user id is carried)');
  if (conv.stream) out.stream = true;
  return out;
}
