/** Internal conversation -> messages request. */
import type {
  ContentBlockParam,
  DocumentBlockParam,
  ImageBlockParam,
  MessageCreateParamsBase,
  MessageParam,
  TextBlockParam,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import type { Conversation, DocumentPart, ImagePart, Part, UserContent } from '../model.js';
import { inputOfArguments } from './response.js';

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

function documentBlock(part: DocumentPart): DocumentBlockParam {
  const s = part.source;
  const source: DocumentBlockParam['source'] =
    s.kind === 'text'
      ? { type: 'text', media_type: 'text/plain', data: s.text }
      : s.kind === 'url'
        ? { type: 'url', url: s.url }
        : { type: 'base64', media_type: 'application/pdf', data: s.data };
  return { type: 'document', source, ...(part.filename ? { title: part.filename } : {}) };
}

function mediaBlock(part: ImagePart | DocumentPart): ImageBlockParam | DocumentBlockParam {
  return part.type === 'image' ? imageBlock(part) : documentBlock(part);
}

function block(part: Part, warnings: string[]): ContentBlockParam | undefined {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
    case 'document':
      return mediaBlock(part);
    case 'tool_call': {
      // Anthropic needs an object; broken arguments from an earlier answer must not make the
      // whole conversation unusable, so they are kept as a string field.
      const input = inputOfArguments(part.arguments);
      if ('_raw_arguments' in input)
        warnings.push(`arguments of tool call ${part.id} are not a JSON object`);
      return { type: 'tool_use', id: toolId(part.id), name: part.name, input };
    }
    case 'tool_result': {
      const content = part.content.map((c: UserContent) =>
        c.type === 'text'
          ? ({ type: 'text', text: c.text } satisfies TextBlockParam)
          : mediaBlock(c),
      );
      const out: ToolResultBlockParam = { type: 'tool_result', tool_use_id: toolId(part.callId) };
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

/** Least output left beside a thinking budget. */
const MIN_ANSWER_TOKENS = 1024;

/**
 * The thinking config for the conversation, or undefined when Anthropic would refuse it: budget
 * below 1024 after leaving MIN_ANSWER_TOKENS for the answer, a forced tool choice, or earlier
 * tool calls without signed thinking blocks (the API requires them when thinking is on).
 */
function thinkingOf(
  conv: Conversation,
  maxTokens: number,
  warnings: string[],
): MessagesRequestBody['thinking'] {
  const reasoning = conv.reasoning;
  if (!reasoning?.enabled || reasoning.effort === 'minimal') return undefined;
  const wanted = reasoning.budgetTokens ?? BUDGET_OF_EFFORT[reasoning.effort ?? 'medium'];
  const budget = Math.min(wanted, maxTokens - MIN_ANSWER_TOKENS);
  if (budget < 1024) {
    warnings.push('reasoning dropped: max_tokens too small for a thinking budget');
    return undefined;
  }
  if (conv.toolChoice?.type === 'required' || conv.toolChoice?.type === 'tool') {
    warnings.push('reasoning dropped: thinking cannot be combined with a forced tool choice');
    return undefined;
  }
  const unsigned = conv.turns.some(
    (t) =>
      t.role === 'assistant' &&
      t.parts.some((p) => p.type === 'tool_call') &&
      !t.parts.some((p) => p.type === 'reasoning' && p.signature),
  );
  if (unsigned) {
    warnings.push('reasoning dropped: earlier tool calls carry no thinking signature');
    return undefined;
  }
  return { type: 'enabled', budget_tokens: budget };
}

/** Tool ids as Anthropic accepts them (^[a-zA-Z0-9_-]+$). */
function toolId(id: string): string {
  return /^[a-zA-Z0-9_-]+$/.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'tool';
}

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
  const thinking = thinkingOf(conv, out.max_tokens, warnings);
  if (thinking) out.thinking = thinking;
  // Extended thinking refuses sampling parameters; newer models refuse temperature with top_p.
  if (conv.temperature !== undefined) {
    if (thinking) warnings.push('temperature dropped (not allowed with thinking)');
    else {
      if (conv.temperature > 1) warnings.push('temperature clamped to 1');
      out.temperature = Math.min(1, conv.temperature);
    }
  }
  if (conv.topP !== undefined) {
    if (thinking || out.temperature !== undefined) warnings.push('top_p dropped');
    else out.top_p = conv.topP;
  }
  if (conv.topK !== undefined) {
    if (thinking) warnings.push('top_k dropped (not allowed with thinking)');
    else out.top_k = conv.topK;
  }
  if (conv.seed !== undefined) warnings.push('seed dropped');
  if (conv.stop !== undefined) out.stop_sequences = conv.stop;
  if (conv.outputFormat) {
    const f = conv.outputFormat;
    if (f.type === 'json_schema')
      out.output_config = { format: { type: 'json_schema', schema: f.schema } };
    // json_object: OpenAI requires the prompt to ask for JSON already, so dropping it is harmless.
    else if (f.type === 'json_object') warnings.push('response_format json_object dropped');
  }
  if (conv.user !== undefined) out.metadata = { user_id: conv.user };
  if (conv.metadata !== undefined) warnings.push('metadata dropped (only the user id is carried)');
  if (conv.stream) out.stream = true;
  return out;
}
