import { describe, expect, it } from 'vitest';
import { isFailedAnswer } from './failedAnswer.js';
import type { SseEvent } from './sse.js';
import { STREAMS } from './testing/samples.js';
import type { ApiFormat } from './types.js';
import { createStreamUsageAccumulator } from './usage.js';

/** Whether the first `count` events of a sample stream of `format` carried content. */
function contentIn(format: ApiFormat, count: number): boolean {
  const accumulator = createStreamUsageAccumulator(format);
  for (const event of STREAMS[format].text.slice(0, count)) accumulator.push(event as SseEvent);
  return accumulator.content;
}

describe('a failed answer (billed nothing)', () => {
  it('a whole answer: no output tokens and no finish', () => {
    expect(isFailedAnswer({ outputTokens: 0, finished: false })).toBe(true);
    expect(isFailedAnswer({ outputTokens: 0, finished: true })).toBe(false);
    expect(isFailedAnswer({ outputTokens: 3, finished: false })).toBe(false);
  });

  it('a stream: no content before it failed, whatever output count its preamble reported', () => {
    expect(isFailedAnswer({ outputTokens: 9, finished: false, content: false })).toBe(true);
    expect(isFailedAnswer({ outputTokens: 0, finished: false, content: true })).toBe(false);
    expect(isFailedAnswer({ outputTokens: 0, finished: true, content: false })).toBe(false);
  });

  it.each([
    // chat: the role-only chunk; responses: created, in_progress, output_item.added,
    // content_part.added; messages: message_start, content_block_start, ping.
    ['chat', 1],
    ['responses', 4],
    ['messages', 3],
  ] as const)('tells the %s preamble (%i events) from its first content', (format, preamble) => {
    expect(contentIn(format, preamble)).toBe(false);
    expect(contentIn(format, preamble + 1)).toBe(true);
  });

  it('counts no content after the stream failed', () => {
    const accumulator = createStreamUsageAccumulator('messages');
    const [start, ...rest] = STREAMS.messages.text as SseEvent[];
    accumulator.push(start!);
    accumulator.push({
      event: 'error',
      data: '{"type":"error","error":{"type":"overloaded_error"}}',
    });
    for (const event of rest) accumulator.push(event);
    expect(accumulator.content).toBe(false);
  });
});
