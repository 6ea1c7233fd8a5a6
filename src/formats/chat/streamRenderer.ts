/** Stream parts -> chat-completions chunks, final usage chunk, then `data: [DONE]`. */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions/completions';
import { newId } from '../check.js';
import { streamErrorEvents } from '../errors.js';
import type { StopReason, TranslateContext, Usage } from '../model.js';
import { chatFinishOf } from '../reasons.js';
import type { StreamRenderer } from '../stream/parts.js';
import { chatUsageOf } from './response.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: string };

/** A renderer of one chat-completions stream. */
export function createChatStreamRenderer(ctx: TranslateContext = {}): StreamRenderer {
  const id = newId('chatcmpl-');
  const created = Math.floor((ctx.now?.() ?? Date.now()) / 1000);
  let model = ctx.model ?? '';
  let usage: Usage | undefined;
  let stop: StopReason = 'end_turn';
  let ended = false;
  const toolIndex = new Map<string, number>();

  const chunk = (
    delta: Delta,
    finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
  ) => {
    const body: ChatCompletionChunk = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    };
    return { data: JSON.stringify(body) };
  };

  return {
    push(part) {
      if (ended) return [];
      switch (part.type) {
        case 'start':
          if (!ctx.model) model = part.model;
          return [chunk({ role: 'assistant', content: '' })];
        case 'block_start':
          if (part.kind !== 'tool_call') return [];
          toolIndex.set(part.key, toolIndex.size);
          return [
            chunk({
              tool_calls: [
                {
                  index: toolIndex.get(part.key) ?? 0,
                  id: part.id ?? newId('call_'),
                  type: 'function',
                  function: { name: part.name ?? '', arguments: '' },
                },
              ],
            }),
          ];
        case 'block_delta':
          if (part.kind === 'text') return [chunk({ content: part.text })];
          if (part.kind === 'reasoning') return [chunk({ reasoning_content: part.text })];
          return [
            chunk({
              tool_calls: [
                { index: toolIndex.get(part.key) ?? 0, function: { arguments: part.text } },
              ],
            }),
          ];
        case 'block_stop':
          return [];
        case 'usage':
          usage = part.usage;
          return [];
        case 'finish':
          stop = part.stopReason;
          return [];
        case 'error':
          ended = true;
          return streamErrorEvents('chat', part.error);
        case 'done': {
          ended = true;
          const out = [chunk({}, chatFinishOf(stop))];
          if (usage && ctx.includeUsage !== false) {
            const last: ChatCompletionChunk = {
              id,
              object: 'chat.completion.chunk',
              created,
              model,
              choices: [],
              usage: chatUsageOf(usage),
            };
            out.push({ data: JSON.stringify(last) });
          }
          out.push({ data: '[DONE]' });
          return out;
        }
      }
    },
  };
}
