/**
 * Stream parts -> messages events in the documented order: message_start, then per block
 * content_block_start / content_block_delta* / content_block_stop (one block open at a time),
 * then message_delta (stop reason, usage) and message_stop.
 */
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages/messages';
import { newId } from '../check.js';
import { streamErrorEvents } from '../errors.js';
import type { StopReason, TranslateContext, Usage } from '../model.js';
import { emptyUsage } from '../model.js';
import { messagesStopOf } from '../reasons.js';
import type { StreamPart, StreamRenderer } from '../stream/parts.js';
import { messagesUsageOf } from './response.js';

/** A renderer of one messages stream. */
export function createMessagesStreamRenderer(ctx: TranslateContext = {}): StreamRenderer {
  const id = newId('msg_');
  let usage: Usage = emptyUsage();
  let stop: StopReason = 'end_turn';
  let stopSequence: string | null = null;
  let ended = false;
  let started = false;
  let startModel = ctx.model ?? '';
  const indexOf = new Map<string, number>();
  let openKey: string | undefined;

  const ev = (event: RawMessageStreamEvent | { type: 'ping' }) => ({
    event: event.type,
    data: JSON.stringify(event),
  });

  const closeOpen = (out: Array<{ event?: string; data: string }>) => {
    if (openKey === undefined) return;
    out.push(ev({ type: 'content_block_stop', index: indexOf.get(openKey) ?? 0 }));
    openKey = undefined;
  };

  const start = (
    out: Array<{ event?: string; data: string }>,
    part: Extract<StreamPart, { type: 'block_start' }>,
  ) => {
    closeOpen(out);
    const index = indexOf.size;
    indexOf.set(part.key, index);
    openKey = part.key;
    const content_block =
      part.kind === 'text'
        ? { type: 'text' as const, text: '', citations: null }
        : part.kind === 'reasoning'
          ? { type: 'thinking' as const, thinking: '', signature: '' }
          : {
              type: 'tool_use' as const,
              id: part.id ?? newId('toolu_'),
              name: part.name ?? '',
              input: {},
              caller: { type: 'direct' as const },
            };
    out.push(ev({ type: 'content_block_start', index, content_block }));
  };

  const messageStart = () => {
    started = true;
    const u = messagesUsageOf(usage);
    return ev({
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: startModel,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        container: null,
        diagnostics: null,
        usage: {
          ...u,
          output_tokens: u.output_tokens,
          cache_creation: null,
          inference_geo: null,
          output_tokens_details: null,
          server_tool_use: null,
          service_tier: null,
          speed: null,
        },
      },
    });
  };

  return {
    push(part) {
      if (ended) return [];
      const out: Array<{ event?: string; data: string }> = [];
      // message_start waits for the first usage-bearing part so input tokens appear in it when known.
      if (!started && part.type !== 'start' && part.type !== 'usage' && part.type !== 'error') {
        out.push(messageStart());
      }
      switch (part.type) {
        case 'start':
          if (!ctx.model) startModel = part.model;
          return out;
        case 'usage':
          usage = part.usage;
          return out;
        case 'block_start':
          start(out, part);
          return out;
        case 'block_delta': {
          if (!indexOf.has(part.key))
            start(out, { type: 'block_start', key: part.key, kind: part.kind });
          const index = indexOf.get(part.key) ?? 0;
          const delta =
            part.kind === 'text'
              ? { type: 'text_delta' as const, text: part.text }
              : part.kind === 'reasoning'
                ? { type: 'thinking_delta' as const, thinking: part.text }
                : { type: 'input_json_delta' as const, partial_json: part.text };
          out.push(ev({ type: 'content_block_delta', index, delta }));
          return out;
        }
        case 'block_stop':
          if (openKey === part.key) closeOpen(out);
          return out;
        case 'finish':
          stop = part.stopReason;
          stopSequence = part.stopSequence ?? null;
          return out;
        case 'error':
          ended = true;
          closeOpen(out);
          out.push(...streamErrorEvents('messages', part.error));
          return out;
        case 'done': {
          ended = true;
          closeOpen(out);
          const u = messagesUsageOf(usage);
          out.push(
            ev({
              type: 'message_delta',
              delta: {
                stop_reason: messagesStopOf(stop),
                stop_sequence: stopSequence,
                stop_details: null,
                container: null,
              },
              usage: {
                input_tokens: u.input_tokens,
                cache_creation_input_tokens: u.cache_creation_input_tokens,
                cache_read_input_tokens: u.cache_read_input_tokens,
                output_tokens: u.output_tokens,
                output_tokens_details: null,
                server_tool_use: null,
              },
            }),
          );
          out.push(ev({ type: 'message_stop' }));
          return out;
        }
      }
    },
  };
}
