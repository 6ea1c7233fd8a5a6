/** Messages stream (message_start ... message_stop) -> stream parts. */
import { isRecord } from '../check.js';
import { errorOfBody } from '../errors.js';
import type { Usage } from '../model.js';
import { stopOfMessages } from '../reasons.js';
import {
  BlockTracker,
  jsonOf,
  malformed,
  type StreamParser,
  type StreamPart,
} from '../stream/parts.js';

/** A parser for one messages stream. */
export function createMessagesStreamParser(): StreamParser {
  const blocks = new BlockTracker();
  const kinds = new Map<string, 'text' | 'reasoning' | 'tool_call'>();
  let started = false;
  let done = false;
  let failed = false;
  const raw = { input: 0, cacheRead: 0, cacheCreate: 0, output: 0 };

  const usage = (u: Record<string, unknown>): Usage => {
    if (typeof u.input_tokens === 'number') raw.input = u.input_tokens;
    if (typeof u.cache_read_input_tokens === 'number') raw.cacheRead = u.cache_read_input_tokens;
    if (typeof u.cache_creation_input_tokens === 'number')
      raw.cacheCreate = u.cache_creation_input_tokens;
    if (typeof u.output_tokens === 'number') raw.output = u.output_tokens;
    return {
      inputTokens: raw.input + raw.cacheRead + raw.cacheCreate,
      cachedInputTokens: raw.cacheRead,
      cacheCreationInputTokens: raw.cacheCreate,
      outputTokens: raw.output,
    };
  };

  return {
    push(event) {
      const out: StreamPart[] = [];
      if (done || failed) return out;
      const data = jsonOf(event.data);
      if (!data) {
        failed = true;
        return [malformed(`event ${event.event ?? ''} is not JSON`)];
      }
      const type = data.type ?? event.event;
      if (type === 'error') {
        failed = true;
        return [{ type: 'error', error: errorOfBody(0, data) }];
      }
      if (type === 'ping') return out;
      if (!started) {
        if (type !== 'message_start' || !isRecord(data.message)) {
          failed = true;
          return [malformed('the stream does not begin with message_start')];
        }
        started = true;
        const msg = data.message;
        out.push({
          type: 'start',
          id: typeof msg.id === 'string' ? msg.id : '',
          model: typeof msg.model === 'string' ? msg.model : '',
        });
        if (isRecord(msg.usage)) out.push({ type: 'usage', usage: usage(msg.usage) });
        return out;
      }
      const key = typeof data.index === 'number' ? String(data.index) : '0';
      switch (type) {
        case 'content_block_start': {
          const block = isRecord(data.content_block) ? data.content_block : {};
          if (block.type === 'text') {
            kinds.set(key, 'text');
            blocks.start(out, key, 'text');
            if (typeof block.text === 'string') blocks.delta(out, key, 'text', block.text);
          } else if (block.type === 'thinking') {
            kinds.set(key, 'reasoning');
            blocks.start(out, key, 'reasoning');
            if (typeof block.thinking === 'string')
              blocks.delta(out, key, 'reasoning', block.thinking);
          } else if (block.type === 'tool_use') {
            if (typeof block.name !== 'string') {
              failed = true;
              return [malformed('tool_use block without a name')];
            }
            kinds.set(key, 'tool_call');
            blocks.start(
              out,
              key,
              'tool_call',
              typeof block.id === 'string' ? block.id : `toolu_${key}`,
              block.name,
            );
          }
          return out;
        }
        case 'content_block_delta': {
          const delta = isRecord(data.delta) ? data.delta : {};
          if (delta.type === 'text_delta' && typeof delta.text === 'string') {
            blocks.delta(out, key, 'text', delta.text);
          } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
            blocks.delta(out, key, 'reasoning', delta.thinking);
          } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
            if (kinds.get(key) === 'tool_call')
              blocks.delta(out, key, 'tool_call', delta.partial_json);
          }
          return out;
        }
        case 'content_block_stop':
          blocks.stop(out, key);
          return out;
        case 'message_delta': {
          blocks.stopAll(out);
          if (isRecord(data.usage)) out.push({ type: 'usage', usage: usage(data.usage) });
          const delta = isRecord(data.delta) ? data.delta : {};
          if (delta.stop_reason !== undefined && delta.stop_reason !== null) {
            out.push({
              type: 'finish',
              stopReason: stopOfMessages(delta.stop_reason as string),
              stopSequence: typeof delta.stop_sequence === 'string' ? delta.stop_sequence : null,
            });
          }
          return out;
        }
        case 'message_stop':
          blocks.stopAll(out);
          done = true;
          out.push({ type: 'done' });
          return out;
        default:
          return out;
      }
    },
    end() {
      if (done || failed) return [];
      failed = true;
      return [malformed('the stream ended before message_stop')];
    },
  };
}
