/** Non-streaming response translation, and assembling a full response from a stream. */

import { SvcError } from '../errors/index.js';
import { parseChatResponse, renderChatResponse } from './chat/response.js';
import { newId } from './check.js';
import { parseMessagesResponse, renderMessagesResponse } from './messages/response.js';
import type { ModelResponse, TranslateContext } from './model.js';
import { emptyUsage } from './model.js';
import { parseResponsesResponse, renderResponsesResponse } from './responses/response.js';
import type { SseEvent } from './sse.js';
import { createStreamParser } from './stream/codecs.js';
import type { StreamPart } from './stream/parts.js';
import { renderResponseStream } from './stream/responseAsStream.js';
import { restoreToolName, restoreToolNames } from './toolNames.js';
import type { ApiFormat } from './types.js';

/** Parses a seller's non-streaming response body (502 invalid_seller_response when malformed). */
export function parseResponse(body: unknown, format: ApiFormat): ModelResponse {
  if (format === 'chat') return parseChatResponse(body);
  if (format === 'responses') return parseResponsesResponse(body);
  return parseMessagesResponse(body);
}

/** Renders an internal response in `format` with a fresh id of that format. */
export function renderResponse(
  resp: ModelResponse,
  format: ApiFormat,
  ctx: TranslateContext = {},
): Record<string, unknown> {
  const shown: ModelResponse = { ...resp, model: ctx.model ?? resp.model };
  if (ctx.now) shown.created = Math.floor(ctx.now() / 1000);
  const body =
    format === 'chat'
      ? renderChatResponse(shown, newId('chatcmpl-'))
      : format === 'responses'
        ? renderResponsesResponse(shown, newId('resp_'))
        : renderMessagesResponse(shown, newId('msg_'));
  return body as unknown as Record<string, unknown>;
}

/** Translates a seller's non-streaming response from `from` to `to` (same format: untouched). */
export function translateResponse(
  body: unknown,
  from: ApiFormat,
  to: ApiFormat,
  ctx: TranslateContext = {},
): Record<string, unknown> {
  if (from === to) {
    parseResponse(body, from);
    return body as Record<string, unknown>;
  }
  return renderResponse(restoreToolNames(parseResponse(body, from), ctx.toolNames), to, ctx);
}

/** Collects stream parts into one internal response. */
export class ResponseCollector {
  private readonly blocks = new Map<string, ModelResponse['parts'][number]>();
  readonly response: ModelResponse = {
    id: '',
    model: '',
    created: Math.floor(Date.now() / 1000),
    parts: [],
    stopReason: 'end_turn',
    usage: emptyUsage(),
  };
  done = false;

  push(part: StreamPart): void {
    switch (part.type) {
      case 'start':
        this.response.id = part.id;
        this.response.model = part.model;
        return;
      case 'block_start': {
        const block: ModelResponse['parts'][number] =
          part.kind === 'text'
            ? { type: 'text', text: '' }
            : part.kind === 'reasoning'
              ? { type: 'reasoning', text: '' }
              : {
                  type: 'tool_call',
                  id: part.id ?? newId('call_'),
                  name: part.name ?? '',
                  arguments: '',
                };
        this.blocks.set(part.key, block);
        this.response.parts.push(block);
        return;
      }
      case 'block_delta': {
        const block = this.blocks.get(part.key);
        if (!block) return;
        if (block.type === 'tool_call') block.arguments += part.text;
        else block.text += part.text;
        return;
      }
      case 'usage':
        this.response.usage = part.usage;
        return;
      case 'finish':
        this.response.stopReason = part.stopReason;
        if (part.stopSequence !== undefined) this.response.stopSequence = part.stopSequence;
        return;
      case 'error':
        throw new SvcError('upstream_error', {
          status: part.error.status,
          message: part.error.message,
          details: { sellerCode: part.error.code },
        });
      case 'done':
        this.done = true;
        return;
      case 'block_stop':
        return;
    }
  }
}

/**
 * Assembles a full non-streaming response in `to` from a seller's stream in `from` (for sellers
 * that only stream). A seller error in the stream throws SvcError with the seller's status;
 * malformed or truncated streams throw 502 invalid_seller_response.
 */
export async function assembleResponse(
  events: AsyncIterable<SseEvent> | Iterable<SseEvent>,
  from: ApiFormat,
  to: ApiFormat = from,
  ctx: TranslateContext = {},
): Promise<Record<string, unknown>> {
  const parser = createStreamParser(from);
  const collector = new ResponseCollector();
  const feed = (parts: StreamPart[]) => {
    for (const part of parts) {
      if (part.type === 'error' && part.error.code === 'invalid_seller_response') {
        throw new SvcError('invalid_seller_response', { message: part.error.message });
      }
      collector.push(restoreToolName(part, ctx.toolNames));
    }
  };
  for await (const event of events) {
    if (event.comment !== undefined) continue;
    feed(parser.push(event));
    if (collector.done) break;
  }
  if (!collector.done) feed(parser.end());
  return renderResponse(collector.response, to, ctx);
}

/**
 * A seller's non-streaming response (in `from`) replayed as a `to` stream, for a streaming client
 * whose seller answered whole. Malformed bodies throw 502 invalid_seller_response.
 */
export function responseAsStream(
  body: unknown,
  from: ApiFormat,
  to: ApiFormat,
  ctx: TranslateContext = {},
): SseEvent[] {
  return renderResponseStream(restoreToolNames(parseResponse(body, from), ctx.toolNames), to, ctx);
}
