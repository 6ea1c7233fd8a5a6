/** Chat-completions stream (chunks, usage chunk, `[DONE]`) -> stream parts. */
import { isRecord } from '../check.js';
import { errorOfBody } from '../errors.js';
import type { StopReason } from '../model.js';
import { stopOfChat } from '../reasons.js';
import {
  BlockTracker,
  jsonOf,
  malformed,
  type StreamParser,
  type StreamPart,
} from '../stream/parts.js';
import { usageOfChat } from './response.js';

/** A parser for one chat-completions stream. */
export function createChatStreamParser(): StreamParser {
  const blocks = new BlockTracker();
  let started = false;
  let finished = false;
  let done = false;
  let failed = false;
  let finish: StopReason | undefined;
  let sawToolCall = false;
  const toolKeys = new Map<number, string>();
  let segment = 0;
  let textKey = '';
  let reasoningKey = '';

  const complete = (out: StreamPart[]) => {
    blocks.stopAll(out);
    if (!finished)
      out.push({ type: 'finish', stopReason: finish ?? stopOfChat(null, sawToolCall) });
    finished = true;
    done = true;
    out.push({ type: 'done' });
  };

  return {
    push(event) {
      const out: StreamPart[] = [];
      if (done || failed) return out;
      if (event.data.trim() === '[DONE]') {
        if (!started) {
          failed = true;
          return [malformed('stream ended before any chunk')];
        }
        complete(out);
        return out;
      }
      const chunk = jsonOf(event.data);
      if (!chunk) {
        failed = true;
        return [malformed('a chunk is not JSON')];
      }
      if (isRecord(chunk.error)) {
        failed = true;
        return [{ type: 'error', error: errorOfBody(500, chunk) }];
      }
      if (!started) {
        started = true;
        out.push({
          type: 'start',
          id: typeof chunk.id === 'string' ? chunk.id : '',
          model: typeof chunk.model === 'string' ? chunk.model : '',
        });
      }
      const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      if (isRecord(choice)) {
        const delta = isRecord(choice.delta) ? choice.delta : {};
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (typeof reasoning === 'string' && reasoning.length > 0) {
          if (!blocks.isOpen(reasoningKey)) reasoningKey = `r${++segment}`;
          blocks.stopAll(out, reasoningKey);
          blocks.delta(out, reasoningKey, 'reasoning', reasoning);
        }
        const content = delta.content ?? delta.refusal;
        if (typeof content === 'string' && content.length > 0) {
          // Text after a tool call or reasoning starts a new block rather than reopening one.
          if (!blocks.isOpen(textKey)) textKey = `t${++segment}`;
          blocks.stopAll(out, textKey);
          blocks.delta(out, textKey, 'text', content);
        }
        if (Array.isArray(delta.tool_calls)) {
          for (const call of delta.tool_calls) {
            if (!isRecord(call)) continue;
            const index = typeof call.index === 'number' ? call.index : 0;
            const fn = isRecord(call.function) ? call.function : {};
            let key = toolKeys.get(index);
            if (key === undefined) {
              if (typeof fn.name !== 'string') {
                failed = true;
                return [...out, malformed('a tool call starts without a function name')];
              }
              key = `c${index}`;
              toolKeys.set(index, key);
              sawToolCall = true;
              blocks.stopAll(out);
              blocks.start(
                out,
                key,
                'tool_call',
                typeof call.id === 'string' ? call.id : `call_${index}`,
                fn.name,
              );
            }
            if (typeof fn.arguments === 'string') blocks.delta(out, key, 'tool_call', fn.arguments);
          }
        }
        if (typeof choice.finish_reason === 'string') {
          blocks.stopAll(out);
          finish = stopOfChat(choice.finish_reason, sawToolCall);
          finished = true;
          out.push({ type: 'finish', stopReason: finish });
        }
      }
      if (isRecord(chunk.usage)) out.push({ type: 'usage', usage: usageOfChat(chunk.usage) });
      return out;
    },
    end() {
      if (done || failed) return [];
      const out: StreamPart[] = [];
      if (finished) {
        // Some servers omit `[DONE]`; a finish reason already ended the answer.
        complete(out);
        return out;
      }
      failed = true;
      return [malformed('the stream ended before a finish reason')];
    },
  };
}
