/**
 * One SSE module (WHATWG "server-sent events" parsing rules): a parser that accepts any chunk
 * boundaries, CRLF / CR / LF line ends, `data:` with or without the space, comments, multi-line
 * data, `event:` and `id:` lines and a leading BOM; and a writer for the same events.
 */

/** One dispatched server-sent event. `comment` is set for a comment line (`: text`) when asked. */
export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
  /** Only for comment events produced by `formatSse({comment})` / `parseSse(..., {comments:true})`. */
  comment?: string;
}

export interface ParseSseOptions {
  /** Also yield comment lines as `{data:'', comment}` events (default: skip them). */
  comments?: boolean;
}

/** Incremental line-oriented SSE decoder; feed text, collect events. */
export class SseDecoder {
  private buffer = '';
  private started = false;
  private pendingCr = false;
  private data: string[] = [];
  private hasData = false;
  private eventName: string | undefined;
  private lastId: string | undefined;
  private readonly keepComments: boolean;

  constructor(options: ParseSseOptions = {}) {
    this.keepComments = options.comments ?? false;
  }

  /** Feeds text; returns the events completed by it. */
  push(text: string): SseEvent[] {
    // An empty chunk (a split multi-byte character, an empty read) must not forget a pending CR.
    if (text.length === 0) return [];
    let input = text;
    if (!this.started && input.length > 0) {
      this.started = true;
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1);
    }
    // A CR that ended the previous chunk already ended a line; a following LF belongs to it.
    if (this.pendingCr && input.startsWith('\n')) input = input.slice(1);
    this.pendingCr = false;
    this.buffer += input;
    const out: SseEvent[] = [];
    let start = 0;
    const buf = this.buffer;
    for (let i = 0; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(buf.slice(start, i), out);
      if (c === 13) {
        if (i + 1 < buf.length) {
          if (buf.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
    }
    this.buffer = buf.slice(start);
    return out;
  }

  /** Ends the input: a last event not followed by a blank line is dropped, per the spec. */
  end(): SseEvent[] {
    this.buffer = '';
    this.resetEvent();
    return [];
  }

  private resetEvent(): void {
    this.data = [];
    this.hasData = false;
    this.eventName = undefined;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line.length === 0) {
      if (this.hasData) {
        const event: SseEvent = { data: this.data.join('\n') };
        if (this.eventName !== undefined) event.event = this.eventName;
        if (this.lastId !== undefined) event.id = this.lastId;
        out.push(event);
      }
      this.resetEvent();
      return;
    }
    const colon = line.indexOf(':');
    if (colon === 0) {
      if (this.keepComments) out.push({ data: '', comment: line.slice(1).replace(/^ /, '') });
      return;
    }
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (field === 'event') {
      this.eventName = value;
    } else if (field === 'id') {
      if (!value.includes('\0')) this.lastId = value;
    }
    // `retry` and unknown fields are ignored.
  }
}

/** Parses a byte or text stream of SSE into events, whatever the chunk boundaries. */
export async function* parseSse(
  chunks: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  options: ParseSseOptions = {},
): AsyncIterable<SseEvent> {
  const decoder = new SseDecoder(options);
  const text = new TextDecoder('utf-8');
  for await (const chunk of chunks) {
    const events = decoder.push(
      typeof chunk === 'string' ? chunk : text.decode(chunk, { stream: true }),
    );
    for (const event of events) yield event;
  }
  const tail = text.decode();
  if (tail) for (const event of decoder.push(tail)) yield event;
  decoder.end();
}

/** Writes one event as SSE text (multi-line data split into several `data:` lines). */
export function formatSse(event: SseEvent): string {
  if (event.comment !== undefined) {
    return `${event.comment
      .split(/\r\n|\r|\n/)
      .map((line) => `: ${line}`)
      .join('\n')}\n\n`;
  }
  let out = '';
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  const data = event.data;
  if (data.indexOf('\n') < 0 && data.indexOf('\r') < 0) return `${out}data: ${data}\n\n`;
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}
