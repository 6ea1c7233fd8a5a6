/** A complete answer replayed as a stream (for a streaming client and a seller that answered whole). */
import type { ModelResponse, TranslateContext } from '../model.js';
import type { SseEvent } from '../sse.js';
import type { ApiFormat } from '../types.js';
import { createStreamRenderer } from './codecs.js';
import type { StreamPart } from './parts.js';

/** How a complete answer is laid out as a stream. */
export interface ResponseStreamOptions {
  /** Pieces each block's text is sent in (default: the whole text in one delta). */
  pieces?: (text: string) => string[];
  /**
   * Report usage right after the start, as a vendor that knows its input count does (messages:
   * input tokens in `message_start`). Default: after the blocks.
   */
  usageFirst?: boolean;
}

/** The stream parts of a complete answer, in order. */
export function partsOfResponse(
  resp: ModelResponse,
  options: ResponseStreamOptions = {},
): StreamPart[] {
  const pieces = options.pieces ?? ((text: string) => [text]);
  const parts: StreamPart[] = [{ type: 'start', id: resp.id, model: resp.model }];
  if (options.usageFirst) parts.push({ type: 'usage', usage: resp.usage });
  resp.parts.forEach((part, i) => {
    const key = String(i);
    if (part.type === 'tool_call') {
      parts.push({ type: 'block_start', key, kind: 'tool_call', id: part.id, name: part.name });
      if (part.arguments)
        parts.push({ type: 'block_delta', key, kind: 'tool_call', text: part.arguments });
    } else {
      const kind = part.type === 'text' ? 'text' : 'reasoning';
      parts.push({ type: 'block_start', key, kind });
      if (part.text) {
        for (const text of pieces(part.text)) parts.push({ type: 'block_delta', key, kind, text });
      }
    }
    parts.push({ type: 'block_stop', key });
  });
  parts.push({ type: 'usage', usage: resp.usage });
  parts.push({
    type: 'finish',
    stopReason: resp.stopReason,
    stopSequence: resp.stopSequence ?? null,
  });
  parts.push({ type: 'done' });
  return parts;
}

/** Renders a complete internal answer as the events of a `format` stream. */
export function renderResponseStream(
  resp: ModelResponse,
  format: ApiFormat,
  ctx: TranslateContext = {},
  options: ResponseStreamOptions = {},
): SseEvent[] {
  const renderer = createStreamRenderer(format, ctx);
  return partsOfResponse(resp, options).flatMap((part) => renderer.push(part));
}
