/** Internal conversation -> responses request. */
import type {
  ResponseCreateParamsBase,
  ResponseInputContent,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import { effortOfBudget, OPENAI_USER_MAX_CHARS, toolResultText } from '../chat/renderRequest.js';
import { unsupported, urlOfImageSource } from '../check.js';
import type { Conversation, UserContent } from '../model.js';

function inputContent(part: UserContent): ResponseInputContent {
  if (part.type === 'text') return { type: 'input_text', text: part.text };
  if (part.type === 'document') {
    const s = part.source;
    if (s.kind === 'text') return { type: 'input_text', text: s.text };
    const filename = part.filename ?? 'document.pdf';
    return s.kind === 'url'
      ? { type: 'input_file', file_url: s.url, filename }
      : { type: 'input_file', file_data: `data:${s.mediaType};base64,${s.data}`, filename };
  }
  return {
    type: 'input_image',
    image_url: urlOfImageSource(part.source),
    detail: part.detail ?? 'auto',
  };
}

/** Renders a responses request (stateless: `store: false`). */
export function renderResponsesRequest(
  conv: Conversation,
  warnings: string[],
): ResponseCreateParamsBase {
  const input: ResponseInputItem[] = [];
  for (const turn of conv.turns) {
    if (turn.role === 'assistant') {
      let text = '';
      const flush = () => {
        if (text.length === 0) return;
        input.push({ role: 'assistant', content: text });
        text = '';
      };
      for (const part of turn.parts) {
        if (part.type === 'text') text += part.text;
        else if (part.type === 'tool_call') {
          flush();
          input.push({
            type: 'function_call',
            call_id: part.id,
            name: part.name,
            arguments: part.arguments,
          });
        } else if (part.type === 'reasoning')
          warnings.push('reasoning in earlier assistant turns dropped');
      }
      flush();
      continue;
    }
    const rest: UserContent[] = [];
    for (const part of turn.parts) {
      if (part.type === 'tool_result') {
        const hasImage = part.content.some((p) => p.type !== 'text');
        input.push({
          type: 'function_call_output',
          call_id: part.callId,
          output:
            hasImage && !part.isError
              ? part.content.map(inputContent)
              : toolResultText(part.content, part.isError),
        } as ResponseInputItem);
      } else if (part.type === 'text' || part.type === 'image' || part.type === 'document')
        rest.push(part);
    }
    if (rest.length > 0) input.push({ role: 'user', content: rest.map(inputContent) });
  }

  const out: ResponseCreateParamsBase = { model: conv.model, input, store: false };
  if (conv.system.length > 0) out.instructions = conv.system.join('\n\n');
  if (conv.tools.length > 0) {
    out.tools = conv.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      parameters: tool.parameters,
      strict: tool.strict ?? false,
    }));
  }
  if (conv.toolChoice) {
    out.tool_choice =
      conv.toolChoice.type === 'tool'
        ? { type: 'function', name: conv.toolChoice.name }
        : conv.toolChoice.type;
  }
  if (conv.parallelToolCalls !== undefined) out.parallel_tool_calls = conv.parallelToolCalls;
  if (conv.maxOutputTokens !== undefined) out.max_output_tokens = conv.maxOutputTokens;
  if (conv.temperature !== undefined) out.temperature = conv.temperature;
  if (conv.topP !== undefined) out.top_p = conv.topP;
  if (conv.topK !== undefined) warnings.push('top_k dropped');
  if (conv.seed !== undefined) warnings.push('seed dropped');
  if (conv.stop !== undefined && conv.stop.length > 0) {
    throw unsupported('stop', 'the responses format has no stop sequences');
  }
  if (conv.outputFormat) {
    const f = conv.outputFormat;
    out.text = {
      format:
        f.type === 'json_schema'
          ? {
              type: 'json_schema',
              name: f.name,
              schema: f.schema,
              ...(f.strict !== undefined ? { strict: f.strict } : {}),
              ...(f.description !== undefined ? { description: f.description } : {}),
            }
          : { type: f.type },
    };
  }
  if (conv.reasoning?.enabled) {
    out.reasoning = {
      effort: conv.reasoning.effort ?? effortOfBudget(conv.reasoning.budgetTokens),
      summary: 'auto',
    };
  }
  if (conv.user !== undefined) {
    // OpenAI refuses a `user` longer than 64 characters (Claude Code's user ids are longer).
    if (conv.user.length <= OPENAI_USER_MAX_CHARS) out.user = conv.user;
    else warnings.push('user dropped (longer than 64 characters)');
  }
  if (conv.metadata !== undefined) out.metadata = conv.metadata;
  if (conv.stream) out.stream = true;
  return out;
}
