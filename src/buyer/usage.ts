/**
 * Token usage reported in seller responses, for the spec 4.5 headers and the closing
 * `: svc-usage` comment: from a complete JSON body, or accumulated from SSE events. Parsing and
 * usage extraction are src/formats' (one SSE module, one usage reader).
 */
import {
  createStreamUsageAccumulator,
  formatOfProtocol,
  SseDecoder,
  type StreamUsageAccumulator,
  usageOf,
} from '../formats/index.js';
import type { TokenUsage } from '../money/index.js';
import type { ApiProtocol } from '../network/index.js';
import { textOf } from './tokenCount.js';

/** Usage of a complete response body, or undefined when it reports none. */
export function usageFromBody(protocol: ApiProtocol, body: unknown): TokenUsage | undefined {
  const format = formatOfProtocol(protocol);
  if (!format || !body || typeof body !== 'object' || !('usage' in body)) return undefined;
  if (!body.usage || typeof body.usage !== 'object') return undefined;
  return usageOf(format, body);
}

/** Reads SSE bytes as they pass and keeps the latest usage and the streamed text. */
export class StreamUsageScanner {
  private readonly decoder = new SseDecoder();
  private readonly text = new TextDecoder();
  private readonly accumulator: StreamUsageAccumulator | undefined;
  private readonly parts: string[] = [];
  /** The responses API id of the streamed response (from `response.created`). */
  responseId: string | undefined;

  constructor(protocol: ApiProtocol) {
    const format = formatOfProtocol(protocol);
    this.accumulator = format ? createStreamUsageAccumulator(format) : undefined;
  }

  push(chunk: Uint8Array): void {
    for (const event of this.decoder.push(this.text.decode(chunk, { stream: true }))) {
      this.accumulator?.push(event);
      if (event.data.startsWith('{')) this.parts.push(event.data);
      if (this.responseId === undefined && event.data.includes('"response.created"')) {
        try {
          const id = (JSON.parse(event.data) as { response?: { id?: unknown } }).response?.id;
          if (typeof id === 'string') this.responseId = id;
        } catch {
          // not JSON: no id
        }
      }
    }
  }

  /** The usage the seller reported, or undefined when it reported none. */
  get usage(): TokenUsage | undefined {
    return this.accumulator?.reported ? this.accumulator.usage() : undefined;
  }

  /** Text carried by the events (for an estimate when no usage arrives). */
  get streamedText(): string {
    return this.parts
      .map((data) => {
        try {
          return textOf(JSON.parse(data));
        } catch {
          return '';
        }
      })
      .join('');
  }
}
