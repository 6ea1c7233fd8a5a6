/**
 * Stream parts -> responses events in the documented order: response.created, response.in_progress,
 * per item output_item.added / (content_part.added / output_text.delta* / output_text.done /
 * content_part.done | function_call_arguments.delta* / .done | reasoning summary events) /
 * output_item.done, then response.completed (or response.incomplete).
 */
import type { ResponseOutputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { newId } from '../check.js';
import type { StopReason, TranslateContext, Usage } from '../model.js';
import { emptyUsage } from '../model.js';
import { responsesEndOf } from '../reasons.js';
import type { StreamPart, StreamRenderer } from '../stream/parts.js';
import { responsesEnvelope, responsesUsageOf } from './response.js';

interface OpenItem {
  key: string;
  kind: 'text' | 'reasoning' | 'tool_call';
  itemId: string;
  outputIndex: number;
  text: string;
  callId?: string;
  name?: string;
}

type Out = Array<{ event?: string; data: string }>;

/** A responses stream event before its sequence number (checked against the SDK's union). */
type EventBody = ResponseStreamEvent extends infer E
  ? E extends { sequence_number: number }
    ? Omit<E, 'sequence_number'>
    : never
  : never;

/** A renderer of one responses stream. */
export function createResponsesStreamRenderer(ctx: TranslateContext = {}): StreamRenderer {
  const id = newId('resp_');
  const createdAt = Math.floor((ctx.now?.() ?? Date.now()) / 1000);
  let model = ctx.model ?? '';
  let seq = 0;
  let usage: Usage = emptyUsage();
  let stop: StopReason = 'end_turn';
  let ended = false;
  let started = false;
  let open: OpenItem | undefined;
  const output: ResponseOutputItem[] = [];
  const keys = new Set<string>();
  const closed = new Map<string, ResponseOutputItem>();

  const emit = (out: Out, event: EventBody) => {
    const body = { ...event, sequence_number: seq++ } as ResponseStreamEvent;
    out.push({ event: event.type, data: JSON.stringify(body) });
  };

  const begin = (out: Out) => {
    if (started) return;
    started = true;
    emit(out, {
      type: 'response.created',
      response: responsesEnvelope(id, model, createdAt, 'in_progress', []),
    });
    emit(out, {
      type: 'response.in_progress',
      response: responsesEnvelope(id, model, createdAt, 'in_progress', []),
    });
  };

  const close = (out: Out) => {
    const item = open;
    if (!item) return;
    open = undefined;
    const base = { item_id: item.itemId, output_index: item.outputIndex };
    let done: ResponseOutputItem;
    if (item.kind === 'text') {
      const part = { type: 'output_text' as const, text: item.text, annotations: [], logprobs: [] };
      emit(out, {
        type: 'response.output_text.done',
        ...base,
        content_index: 0,
        text: item.text,
        logprobs: [],
      });
      emit(out, { type: 'response.content_part.done', ...base, content_index: 0, part });
      done = {
        type: 'message',
        id: item.itemId,
        status: 'completed',
        role: 'assistant',
        content: [part],
      };
    } else if (item.kind === 'reasoning') {
      const part = { type: 'summary_text' as const, text: item.text };
      emit(out, {
        type: 'response.reasoning_summary_text.done',
        ...base,
        summary_index: 0,
        text: item.text,
      });
      emit(out, { type: 'response.reasoning_summary_part.done', ...base, summary_index: 0, part });
      done = { type: 'reasoning', id: item.itemId, summary: [part] };
    } else {
      emit(out, {
        type: 'response.function_call_arguments.done',
        ...base,
        name: item.name ?? '',
        arguments: item.text,
      });
      done = {
        type: 'function_call',
        id: item.itemId,
        call_id: item.callId ?? '',
        name: item.name ?? '',
        arguments: item.text,
        status: 'completed',
      };
    }
    output.push(done);
    closed.set(item.key, done);
    emit(out, { type: 'response.output_item.done', output_index: item.outputIndex, item: done });
  };

  const start = (
    out: Out,
    part: { key: string; kind: OpenItem['kind']; id?: string; name?: string },
  ) => {
    close(out);
    keys.add(part.key);
    const outputIndex = output.length;
    if (part.kind === 'text') {
      const itemId = newId('msg_');
      open = { key: part.key, kind: 'text', itemId, outputIndex, text: '' };
      emit(out, {
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: {
          type: 'message',
          id: itemId,
          status: 'in_progress',
          role: 'assistant',
          content: [],
        },
      });
      emit(out, {
        type: 'response.content_part.added',
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      });
    } else if (part.kind === 'reasoning') {
      const itemId = newId('rs_');
      open = { key: part.key, kind: 'reasoning', itemId, outputIndex, text: '' };
      emit(out, {
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { type: 'reasoning', id: itemId, summary: [] },
      });
      emit(out, {
        type: 'response.reasoning_summary_part.added',
        item_id: itemId,
        output_index: outputIndex,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
    } else {
      const itemId = newId('fc_');
      const callId = part.id ?? newId('call_');
      open = {
        key: part.key,
        kind: 'tool_call',
        itemId,
        outputIndex,
        text: '',
        callId,
        name: part.name ?? '',
      };
      emit(out, {
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: {
          type: 'function_call',
          id: itemId,
          call_id: callId,
          name: part.name ?? '',
          arguments: '',
          status: 'in_progress',
        },
      });
    }
  };

  const finalResponse = () => {
    const end = responsesEndOf(stop);
    const response = responsesEnvelope(id, model, createdAt, end.status, output);
    if (end.incomplete) response.incomplete_details = { reason: end.incomplete };
    response.output_text = output
      .flatMap((item) => (item.type === 'message' ? item.content : []))
      .map((c) => (c.type === 'output_text' ? c.text : ''))
      .join('');
    response.usage = responsesUsageOf(usage);
    const type: 'response.completed' | 'response.incomplete' =
      end.status === 'completed' ? 'response.completed' : 'response.incomplete';
    return { response, type };
  };

  return {
    push(part: StreamPart) {
      if (ended) return [];
      const out: Out = [];
      if (part.type !== 'start' && part.type !== 'error') begin(out);
      switch (part.type) {
        case 'start':
          if (!ctx.model) model = part.model;
          return out;
        case 'block_start':
          start(out, part);
          return out;
        case 'block_delta': {
          if (!keys.has(part.key)) start(out, part);
          if (!open || open.key !== part.key) {
            // A delta for a tool call closed earlier (interleaved parallel calls) cannot reopen its
            // item; it still reaches the final response.
            const done = closed.get(part.key);
            if (done?.type === 'function_call') done.arguments += part.text;
            return out;
          }
          open.text += part.text;
          const base = { item_id: open.itemId, output_index: open.outputIndex };
          if (part.kind === 'text') {
            emit(out, {
              type: 'response.output_text.delta',
              ...base,
              content_index: 0,
              delta: part.text,
              logprobs: [],
            });
          } else if (part.kind === 'reasoning') {
            emit(out, {
              type: 'response.reasoning_summary_text.delta',
              ...base,
              summary_index: 0,
              delta: part.text,
            });
          } else
            emit(out, {
              type: 'response.function_call_arguments.delta',
              ...base,
              delta: part.text,
            });
          return out;
        }
        case 'block_stop':
          if (open?.key === part.key) close(out);
          return out;
        case 'usage':
          usage = part.usage;
          return out;
        case 'finish':
          stop = part.stopReason;
          return out;
        case 'error': {
          ended = true;
          close(out);
          const response = responsesEnvelope(id, model, createdAt, 'failed', output);
          response.error = { code: 'server_error', message: part.error.message };
          if (started) emit(out, { type: 'response.failed', response });
          else {
            emit(out, {
              type: 'error',
              code: part.error.code,
              message: part.error.message,
              param: part.error.param ?? null,
            });
          }
          return out;
        }
        case 'done': {
          ended = true;
          close(out);
          const final = finalResponse();
          emit(out, { type: final.type, response: final.response });
          return out;
        }
      }
    },
  };
}
