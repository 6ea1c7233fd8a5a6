/** Server-sent events: an incremental parser and a writer (one module for both, STYLE 4). */

export interface SseEvent {
  event?: string;
  data: string;
}

/** Encodes one event the way the vendors do (`event:` line only when named). */
export function encodeSse(event: SseEvent): string {
  const lines = event.event !== undefined ? [`event: ${event.event}`] : [];
  for (const line of event.data.split('\n')) lines.push(`data: ${line}`);
  return `${lines.join('\n')}\n\n`;
}

/** Parses an SSE byte stream incrementally; feed it chunks, collect events. */
export class SseParser {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  private event: string | undefined;
  private data: string[] = [];

  /** Feeds bytes; returns the events completed by them. */
  push(chunk: Uint8Array): SseEvent[] {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    const out: SseEvent[] = [];
    for (;;) {
      const newline = this.buffer.search(/\r\n|\n|\r/);
      if (newline < 0) break;
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      this.buffer = this.buffer.slice(newline + width);
      if (line === '') {
        if (this.data.length > 0) {
          out.push({
            ...(this.event !== undefined ? { event: this.event } : {}),
            data: this.data.join('\n'),
          });
        }
        this.event = undefined;
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
    }
    return out;
  }

  /** Bytes held that do not yet form a complete line (a stream that ends here was cut). */
  pendingBytes(): number {
    return this.buffer.length + this.data.length;
  }
}
