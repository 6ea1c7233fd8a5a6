/**
 * Stream translation: the seller's events are parsed into stream parts and rendered as the
 * client's events. Any failure (malformed seller output, early end, a thrown transport error)
 * becomes the client format's in-stream error event; the output always ends properly.
 */
import { errorOfThrown, streamErrorEvents } from './errors.js';
import type { TranslateContext } from './model.js';
import type { SseEvent } from './sse.js';
import { createStreamParser, createStreamRenderer } from './stream/codecs.js';
import { jsonOf, type StreamPart } from './stream/parts.js';
import { restoreToolName } from './toolNames.js';
import type { ApiFormat } from './types.js';

/** Translates a seller's parsed SSE events from `from` into the client's `to` events. */
export async function* translateStream(
  events: AsyncIterable<SseEvent> | Iterable<SseEvent>,
  from: ApiFormat,
  to: ApiFormat,
  ctx: TranslateContext = {},
): AsyncIterable<SseEvent> {
  if (from === to) {
    yield* passThrough(events, from, ctx);
    return;
  }
  const parser = createStreamParser(from);
  const renderer = createStreamRenderer(to, ctx);
  let finished = false;
  const emit = (parts: StreamPart[]): SseEvent[] => {
    const out: SseEvent[] = [];
    for (const part of parts) {
      if (part.type === 'error') ctx.onError?.(part.error);
      if (part.type === 'error' || part.type === 'done') finished = true;
      for (const ev of renderer.push(restoreToolName(part, ctx.toolNames))) out.push(ev);
    }
    return out;
  };
  try {
    for await (const event of events) {
      if (event.comment !== undefined) continue;
      for (const out of emit(parser.push(event))) yield out;
      if (finished) return;
    }
    for (const out of emit(parser.end())) yield out;
  } catch (error) {
    ctx.onError?.(error);
    for (const out of renderer.push({ type: 'error', error: errorOfThrown(error) })) yield out;
  }
}

/** Same format: events pass untouched; failures and early ends still get a proper error event. */
async function* passThrough(
  events: AsyncIterable<SseEvent> | Iterable<SseEvent>,
  format: ApiFormat,
  ctx: TranslateContext,
): AsyncIterable<SseEvent> {
  const parser = createStreamParser(format);
  const hideUsage = format === 'chat' && ctx.includeUsage === false;
  let count = 0;
  try {
    for await (const event of events) {
      if (event.comment !== undefined) continue;
      count++;
      const parts = parser.push(event);
      const error = parts.find((p) => p.type === 'error');
      if (error?.type === 'error' && error.error.code === 'invalid_seller_response') {
        ctx.onError?.(error.error);
        yield* streamErrorEvents(format, error.error, count);
        return;
      }
      // The buyer may add include_usage for itself; a client that did not ask does not see it.
      if (!(hideUsage && isUsageOnlyChunk(event.data))) yield event;
      if (error || parts.some((p) => p.type === 'done')) return;
    }
    const tail = parser.end();
    const tailError = tail.find((p) => p.type === 'error');
    if (tailError?.type === 'error') {
      ctx.onError?.(tailError.error);
      yield* streamErrorEvents(format, tailError.error, count);
    } else if (format === 'chat' && tail.some((p) => p.type === 'done')) {
      // The seller finished the answer but left out the closing `[DONE]`: close it for the client.
      yield { data: '[DONE]' };
    }
  } catch (error) {
    ctx.onError?.(error);
    yield* streamErrorEvents(format, errorOfThrown(error), count);
  }
}

/** A chat chunk that only carries usage (`choices: []`). */
function isUsageOnlyChunk(data: string): boolean {
  if (!data.includes('"usage"')) return false;
  const chunk = jsonOf(data);
  return chunk !== undefined && Array.isArray(chunk.choices) && chunk.choices.length === 0;
}
