/** Responses stream (response.created ... response.completed) -> stream parts. */
import { isRecord } from '../check.js';
import { errorOfBody } from '../errors.js';
import { stopOfResponses } from '../reasons.js';
import {
  BlockTracker,
  jsonOf,
  malformed,
  type StreamParser,
  type StreamPart,
} from '../stream/parts.js';
import { usageOfResponses } from './response.js';

/** A parser for one responses stream. */
export function createResponsesStreamParser(): StreamParser {
  const blocks = new BlockTracker();
  let started = false;
  let done = false;
  let failed = false;
  let sawToolCall = false;
  const summaryParts = new Map<string, number>();

  return {
    push(event) {
      const out: StreamPart[] = [];
      if (done || failed) return out;
      const data = jsonOf(event.data);
      if (!data) {
        failed = true;
        return [malformed(`event ${event.event ?? ''} is not JSON`)];
      }
      const type = typeof data.type === 'string' ? data.type : event.event;
      if (type === 'error') {
        failed = true;
        return [{ type: 'error', error: errorOfBody(0, data) }];
      }
      if (type === 'response.failed') {
        failed = true;
        const response = isRecord(data.response) ? data.response : {};
        // A failed response still reports what it consumed; the seller bills it.
        const usage: StreamPart[] = isRecord(response.usage)
          ? [{ type: 'usage', usage: usageOfResponses(response.usage) }]
          : [];
        return [
          ...usage,
          { type: 'error', error: errorOfBody(0, { error: response.error ?? {} }) },
        ];
      }
      if (!started) {
        if (
          (type !== 'response.created' && type !== 'response.in_progress') ||
          !isRecord(data.response)
        ) {
          failed = true;
          return [malformed('the stream does not begin with response.created')];
        }
        started = true;
        out.push({
          type: 'start',
          id: typeof data.response.id === 'string' ? data.response.id : '',
          model: typeof data.response.model === 'string' ? data.response.model : '',
        });
        return out;
      }
      const index = typeof data.output_index === 'number' ? data.output_index : 0;
      const itemKey = String(index);
      const textKey = `${index}:${typeof data.content_index === 'number' ? data.content_index : 0}`;
      switch (type) {
        case 'response.output_item.added': {
          const item = isRecord(data.item) ? data.item : {};
          if (item.type === 'function_call') {
            if (typeof item.name !== 'string') {
              failed = true;
              return [malformed('function_call item without a name')];
            }
            sawToolCall = true;
            blocks.stopAll(out);
            blocks.start(
              out,
              itemKey,
              'tool_call',
              typeof item.call_id === 'string' ? item.call_id : `call_${index}`,
              item.name,
            );
            if (typeof item.arguments === 'string')
              blocks.delta(out, itemKey, 'tool_call', item.arguments);
          } else if (item.type === 'reasoning') {
            blocks.stopAll(out);
            blocks.start(out, itemKey, 'reasoning');
          }
          return out;
        }
        case 'response.content_part.added':
          blocks.stopAll(out);
          blocks.start(out, textKey, 'text');
          return out;
        case 'response.output_text.delta':
        case 'response.refusal.delta':
          if (typeof data.delta === 'string') blocks.delta(out, textKey, 'text', data.delta);
          return out;
        case 'response.content_part.done':
          blocks.stop(out, textKey);
          return out;
        case 'response.function_call_arguments.delta':
          if (typeof data.delta === 'string') blocks.delta(out, itemKey, 'tool_call', data.delta);
          return out;
        case 'response.reasoning_summary_part.added': {
          const n = summaryParts.get(itemKey) ?? 0;
          summaryParts.set(itemKey, n + 1);
          if (n > 0) blocks.delta(out, itemKey, 'reasoning', '\n\n');
          return out;
        }
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta':
          if (typeof data.delta === 'string') blocks.delta(out, itemKey, 'reasoning', data.delta);
          return out;
        case 'response.output_item.done': {
          const item = isRecord(data.item) ? data.item : {};
          if (item.type === 'message') {
            const count = Array.isArray(item.content) ? item.content.length : 1;
            for (let c = 0; c < Math.max(1, count); c++) blocks.stop(out, `${index}:${c}`);
          } else blocks.stop(out, itemKey);
          return out;
        }
        case 'response.completed':
        case 'response.incomplete': {
          blocks.stopAll(out);
          const response = isRecord(data.response) ? data.response : {};
          if (isRecord(response.usage))
            out.push({ type: 'usage', usage: usageOfResponses(response.usage) });
          const incomplete = isRecord(response.incomplete_details)
            ? response.incomplete_details.reason
            : undefined;
          const status =
            typeof response.status === 'string'
              ? response.status
              : type === 'response.incomplete'
                ? 'incomplete'
                : 'completed';
          out.push({
            type: 'finish',
            stopReason: stopOfResponses(status, incomplete as string, sawToolCall),
          });
          done = true;
          out.push({ type: 'done' });
          return out;
        }
        default:
          return out;
      }
    },
    end() {
      if (done || failed) return [];
      failed = true;
      return [malformed('the stream ended before response.completed')];
    },
  };
}
