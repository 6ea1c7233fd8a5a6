/**
 * The internal stream vocabulary: every format's stream parses into these parts and every format's
 * stream renders from them. Blocks are keyed so a renderer can number them in its own way.
 */
import type { StopReason, Usage } from '../model.js';

export type BlockKind = 'text' | 'reasoning' | 'tool_call';

/** An error to show the client, in format-neutral terms. */
export interface StreamError {
  status: number;
  message: string;
  /** svc error code or the seller's error type/code. */
  code: string;
  param?: string | null;
}

export type StreamPart =
  | { type: 'start'; id: string; model: string }
  | { type: 'block_start'; key: string; kind: BlockKind; id?: string; name?: string }
  | { type: 'block_delta'; key: string; kind: BlockKind; text: string }
  | { type: 'block_stop'; key: string }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; stopReason: StopReason; stopSequence?: string | null }
  | { type: 'error'; error: StreamError }
  | { type: 'done' };

/** A format's stream parser: a small reducer fed one SSE event at a time. */
export interface StreamParser {
  push(event: { event?: string; data: string }): StreamPart[];
  /** The source ended; emits an error part when it ended before its terminal event. */
  end(): StreamPart[];
}

/** A format's stream renderer. */
export interface StreamRenderer {
  push(part: StreamPart): Array<{ event?: string; data: string }>;
}

/**
 * Tracks open blocks for a parser, so deltas without a start still get one and every block is
 * stopped exactly once before the finish.
 */
export class BlockTracker {
  private readonly open = new Map<string, BlockKind>();
  private readonly stopped = new Set<string>();

  start(out: StreamPart[], key: string, kind: BlockKind, id?: string, name?: string): void {
    if (this.open.has(key) || this.stopped.has(key)) return;
    this.open.set(key, kind);
    const part: StreamPart = { type: 'block_start', key, kind };
    if (id !== undefined) part.id = id;
    if (name !== undefined) part.name = name;
    out.push(part);
  }

  delta(out: StreamPart[], key: string, kind: BlockKind, text: string): void {
    if (!this.open.has(key) && !this.stopped.has(key)) this.start(out, key, kind);
    if (text.length > 0) out.push({ type: 'block_delta', key, kind, text });
  }

  stop(out: StreamPart[], key: string): void {
    if (!this.open.has(key)) return;
    this.open.delete(key);
    this.stopped.add(key);
    out.push({ type: 'block_stop', key });
  }

  /** Stops every open block except `keep`. */
  stopAll(out: StreamPart[], keep?: string): void {
    for (const key of [...this.open.keys()]) if (key !== keep) this.stop(out, key);
  }

  isOpen(key: string): boolean {
    return this.open.has(key);
  }
}

/** A stream error part for text that is not JSON or misses required fields. */
export function malformed(message: string): StreamPart {
  return {
    type: 'error',
    error: {
      status: 502,
      code: 'invalid_seller_response',
      message: `The seller sent a malformed stream: ${message}`,
    },
  };
}

/** JSON of an event's data, or undefined when it is not a JSON object. */
export function jsonOf(data: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
