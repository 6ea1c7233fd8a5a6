/**
 * Counts token usage from an upstream response as it passes through, JSON or SSE, with the
 * src/formats readers (one SSE parser, one usage reader per format), and tells whether the answer
 * ended the way its format ends a complete one, so a cut or failed stream is reported, not billed
 * as complete. Hidden reasoning tokens are kept: the seller bills them as output.
 */
import {
  type ApiFormat,
  createStreamUsageAccumulator,
  formatOfProtocol,
  reportedUsageOf,
  SseDecoder,
  type StreamUsageAccumulator,
} from '../formats/index.js';
import type { TokenUsage } from '../money/index.js';
import type { ApiProtocol } from '../network/index.js';

export interface MeterResult {
  usage?: TokenUsage;
  /** The response ended the way the format says a complete response ends. */
  complete: boolean;
  /** Why it is not complete (malformed JSON, cut stream, error event). */
  error?: string;
  /** A stream only: content came before any failure (src/formats/failedAnswer.ts). */
  content?: boolean;
}

/** Longest upstream text quoted in a failure reason (the trailer carries it to the buyer). */
const MAX_REASON_CHARS = 200;

/** The format whose field names a protocol's usage uses (image answers use the responses API's). */
function usageFormatOf(protocol: ApiProtocol): ApiFormat {
  return formatOfProtocol(protocol) ?? 'responses';
}

/** Usage of a non-streaming body of `protocol`, or undefined when it reports none. */
export function usageFromJson(protocol: ApiProtocol, body: unknown): TokenUsage | undefined {
  return reportedUsageOf(usageFormatOf(protocol), body, { reasoning: true });
}

/** Watches one upstream response body. */
export class UsageMeter {
  private readonly protocol: ApiProtocol;
  private readonly streaming: boolean;
  private readonly decoder = new SseDecoder();
  private readonly text = new TextDecoder();
  private readonly accumulator: StreamUsageAccumulator;
  private readonly jsonChunks: Uint8Array[] = [];

  constructor(protocol: ApiProtocol, streaming: boolean) {
    this.protocol = protocol;
    this.streaming = streaming;
    this.accumulator = createStreamUsageAccumulator(usageFormatOf(protocol), { reasoning: true });
  }

  push(chunk: Uint8Array): void {
    if (!this.streaming) {
      this.jsonChunks.push(chunk);
      return;
    }
    for (const event of this.decoder.push(this.text.decode(chunk, { stream: true }))) {
      this.accumulator.push(event);
    }
  }

  /** Result once the body has ended. */
  finish(): MeterResult {
    if (!this.streaming) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.concat(this.jsonChunks).toString('utf8'));
      } catch {
        return { complete: false, error: 'upstream returned malformed JSON' };
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        return { complete: false, error: 'upstream returned malformed JSON' };
      }
      const usage = usageFromJson(this.protocol, parsed);
      return { ...(usage ? { usage } : {}), complete: true };
    }
    for (const event of this.decoder.push(this.text.decode())) this.accumulator.push(event);
    const { content } = this.accumulator;
    const usage = this.accumulator.reported
      ? { usage: this.accumulator.usage(), content }
      : { content };
    const failure = this.accumulator.error;
    if (failure !== undefined) {
      const reason =
        failure.code === 'invalid_seller_response'
          ? `upstream sent a malformed stream (${failure.message})`
          : `upstream sent an error event (${failure.message})`;
      return { ...usage, complete: false, error: reason.slice(0, MAX_REASON_CHARS) };
    }
    if (!this.accumulator.complete) {
      return { ...usage, complete: false, error: 'upstream stream ended before its final event' };
    }
    return { ...usage, complete: true };
  }
}
