import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSse, parseSse, SseDecoder, type SseEvent } from './sse.js';

async function collect(chunks: Array<Uint8Array | string>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const event of parseSse(chunks)) out.push(event);
  return out;
}

const encoder = new TextEncoder();

describe('parseSse', () => {
  it('parses data with and without a space, event and id lines, comments, CRLF and a BOM', async () => {
    const text =
      '\uFEFF: comment\r\nevent: message_start\r\ndata: {"a":1}\r\n\r\ndata:{"b":2}\n\nid: 7\ndata: x\rdata: y\r\r';
    expect(await collect([text])).toEqual([
      { event: 'message_start', data: '{"a":1}' },
      { data: '{"b":2}' },
      { id: '7', data: 'x\ny' },
    ]);
  });

  it('drops a last event without a terminating blank line', async () => {
    expect(await collect(['data: a\n\ndata: b\n'])).toEqual([{ data: 'a' }]);
  });

  it('yields comments when asked', async () => {
    const out: SseEvent[] = [];
    for await (const e of parseSse([': svc-usage {"x":1}\n\n'], { comments: true })) out.push(e);
    expect(out).toEqual([{ data: '', comment: 'svc-usage {"x":1}' }]);
  });

  it('decodes multi-byte characters split across byte chunks', async () => {
    const bytes = encoder.encode('data: héllo 🌍\n\n');
    const chunks = Array.from(bytes, (b) => new Uint8Array([b]));
    expect(await collect(chunks)).toEqual([{ data: 'héllo 🌍' }]);
  });

  it('gives identical events whatever the byte boundaries (property)', async () => {
    const field = fc
      .string({ unit: 'grapheme', maxLength: 20 })
      .map((s) => s.replace(/[\r\n]/g, ''));
    const eventArb = fc.record(
      {
        event: fc.stringMatching(/^[a-z_.]{1,12}$/),
        data: fc.array(field, { minLength: 1, maxLength: 3 }).map((lines) => lines.join('\n')),
      },
      { requiredKeys: ['data'] },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        async (events, eol) => {
          const text = events.map((e) => formatSse(e).replace(/\n/g, eol)).join('');
          const bytes = encoder.encode(text);
          const whole = await collect([bytes]);
          expect(whole).toEqual(events);
          for (let cut = 1; cut < bytes.length; cut++) {
            expect(await collect([bytes.slice(0, cut), bytes.slice(cut)])).toEqual(whole);
          }
          expect(await collect(Array.from(bytes, (b) => new Uint8Array([b])))).toEqual(whole);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('CRLF split across chunks', () => {
  const stream =
    'event: message_start\r\ndata: {"a":1}\r\n\r\nevent: ping\r\ndata: x\r\ndata: y\r\n\r\n';
  const expected: SseEvent[] = [
    { event: 'message_start', data: '{"a":1}' },
    { event: 'ping', data: 'x\ny' },
  ];

  it('keeps every event whole wherever the bytes are split, empty chunks included', async () => {
    const bytes = encoder.encode(stream);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const head = bytes.slice(0, cut);
      const tail = bytes.slice(cut);
      expect(await collect([head, tail]), `cut at ${cut}`).toEqual(expected);
      expect(await collect([head, new Uint8Array(0), tail]), `empty at ${cut}`).toEqual(expected);
      expect(await collect([stream.slice(0, cut), '', stream.slice(cut)])).toEqual(expected);
    }
  });

  it('keeps the event name when a CR ends one chunk and its LF starts the next', () => {
    const decoder = new SseDecoder();
    expect(decoder.push('event: message_start\r')).toEqual([]);
    expect(decoder.push('')).toEqual([]);
    expect(decoder.push('\ndata: {}\r')).toEqual([]);
    expect(decoder.push('\n\r')).toEqual([{ event: 'message_start', data: '{}' }]);
    expect(decoder.push('\n')).toEqual([]);
  });
});

describe('formatSse', () => {
  it('writes event, id and multi-line data, and comments', () => {
    expect(formatSse({ event: 'ping', data: '{}' })).toBe('event: ping\ndata: {}\n\n');
    expect(formatSse({ id: '1', data: 'a\nb' })).toBe('id: 1\ndata: a\ndata: b\n\n');
    expect(formatSse({ data: '', comment: 'svc-usage {}' })).toBe(': svc-usage {}\n\n');
  });
});
