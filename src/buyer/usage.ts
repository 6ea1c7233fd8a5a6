/**
 * Token usage reported in seller responses, for the usage headers and the closing
 * `: svc-usage` comment: from a complete JSON body, or accumulated from SSE events. Parsing and
 * usage extraction are src/formats' (one SSE module, one usage reader).
 */
import {
  type ApiFormat,
  createStreamUsageAccumulator,
  formatOfProtocol,
  SseDecoder,
  type SseEvent,
  type StreamError,
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

/** How a seller's stream went so far, as its own events tell. */
export type StreamVerdict = 'open' | 'ended' | 'seller_error' | 'malformed';

const RESPONSES_ENDS = new Set(['response.completed', 'response.incomplete']);
const RESPONSES_ERRORS = new Set(['response.failed', 'error']);

/** The verdict after one event of `format` (chat, responses, messages). */
function verdictOf(format: ApiFormat | undefined, event: SseEvent): StreamVerdict {
  if (event.data === '[DONE]') return format === 'chat' ? 'ended' : 'malformed';
  let json: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(event.data);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return 'malformed';
    json = parsed as Record<string, unknown>;
  } catch {
    return 'malformed';
  }
  const type = typeof json.type === 'string' ? json.type : event.event;
  if (format === 'chat') {
    if (json.error !== undefined) return 'seller_error';
    const choices = Array.isArray(json.choices)
      ? (json.choices as { finish_reason?: unknown }[])
      : [];
    return choices.some((c) => c && typeof c.finish_reason === 'string') ? 'ended' : 'open';
  }
  if (format === 'responses') {
    if (type && RESPONSES_ERRORS.has(type)) return 'seller_error';
    return type && RESPONSES_ENDS.has(type) ? 'ended' : 'open';
  }
  if (type === 'error' || event.event === 'error') return 'seller_error';
  return type === 'message_stop' ? 'ended' : 'open';
}

/**
 * Reads SSE bytes as they pass and keeps the latest usage, the streamed text, and whether the
 * seller's stream reached its final event (a stream without one was cut).
 */
export class StreamUsageScanner {
  private readonly decoder = new SseDecoder();
  private readonly text = new TextDecoder();
  private readonly format: ApiFormat | undefined;
  private readonly accumulator: StreamUsageAccumulator | undefined;
  private readonly parts: string[] = [];
  /** A responses stream's final event (`response.completed` / `.incomplete`), as JSON text. */
  finalEvent: string | undefined;
  /** `ended` once the final event passed; a seller error or malformed event is final too. */
  verdict: StreamVerdict = 'open';
  /** Events seen (the responses API numbers its events). */
  events = 0;
  /** A chat stream's closing `[DONE]` passed. */
  doneSeen = false;

  constructor(protocol: ApiProtocol) {
    this.format = formatOfProtocol(protocol);
    this.accumulator = this.format ? createStreamUsageAccumulator(this.format) : undefined;
  }

  push(chunk: Uint8Array): void {
    for (const event of this.decoder.push(this.text.decode(chunk, { stream: true }))) {
      if (event.comment !== undefined) continue;
      this.events++;
      if (event.data === '[DONE]') this.doneSeen = true;
      this.accumulator?.push(event);
      if (event.data.startsWith('{')) this.parts.push(event.data);
      if (this.verdict === 'open' || this.verdict === 'ended') {
        const verdict = verdictOf(this.format, event);
        // After the final event only a failure changes the verdict (a chat usage chunk does not).
        if (this.verdict === 'open' || verdict === 'seller_error' || verdict === 'malformed') {
          if (verdict !== 'open') this.verdict = verdict;
          // The response object the buyer keeps for later turns (src/buyer/responsesState.ts).
          if (verdict === 'ended' && this.format === 'responses') this.finalEvent = event.data;
        }
      }
    }
  }

  /** True when the events' format is known (only then can the preamble be told from content). */
  get readsContent(): boolean {
    return this.accumulator !== undefined;
  }

  /** Content (text, reasoning, a tool call) came before any failure (src/formats/usage.ts). */
  get contentStarted(): boolean {
    return this.accumulator?.content ?? false;
  }

  /** The seller's own error event, as its format says it (status, code, message). */
  get streamError(): StreamError | undefined {
    return this.accumulator?.error;
  }

  /** The usage the seller reported, or undefined when it reported none. */
  get usage(): TokenUsage | undefined {
    return this.accumulator?.reported ? this.accumulator.usage() : undefined;
  }

  /** The data of the JSON events seen so far, in order (for an audit of the answer). */
  get eventData(): readonly string[] {
    return this.parts;
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

const RESPONSES_FINAL = /"type":\s*"response\.(?:completed|incomplete)"/;

/**
 * Finds a responses stream's final event in the bytes a client receives, for a translated stream
 * whose response the buyer keeps (src/buyer/responsesState.ts): the ids the client saw are the
 * translator's, not the seller's.
 */
export class FinalResponseCatcher {
  private readonly decoder = new SseDecoder();
  private readonly text = new TextDecoder();
  finalEvent: string | undefined;

  push(chunk: Uint8Array): void {
    for (const event of this.decoder.push(this.text.decode(chunk, { stream: true }))) {
      const name = event.event;
      const final =
        name === undefined
          ? RESPONSES_FINAL.test(event.data)
          : name === 'response.completed' || name === 'response.incomplete';
      if (final) this.finalEvent = event.data;
    }
  }
}
