/** Token usage of responses and streams in any format, normalised to svc's TokenUsage. */
import type { TokenUsage } from '../money/index.js';
import { usageOfChat } from './chat/response.js';
import { isRecord } from './check.js';
import { usageOfMessages } from './messages/response.js';
import type { Usage } from './model.js';
import { usageOfResponses } from './responses/response.js';
import type { SseEvent } from './sse.js';
import { createStreamParser } from './stream/codecs.js';
import type { StreamError, StreamPart } from './stream/parts.js';
import type { ApiFormat } from './types.js';

export interface UsageOptions {
  /**
   * Keep hidden reasoning tokens (part of the output, never more than it) as `reasoningTokens`,
   * as a seller claims them.
   */
  reasoning?: boolean;
}

/** A token count a stranger reported: a non-negative safe integer, anything else counts as 0. */
function count(value: number | undefined): number {
  return value !== undefined && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

function toTokenUsage(usage: Usage, options: UsageOptions): TokenUsage {
  const inputTokens = count(usage.inputTokens);
  const outputTokens = count(usage.outputTokens);
  const out: TokenUsage = {
    inputTokens,
    cachedInputTokens: Math.min(count(usage.cachedInputTokens), inputTokens),
    outputTokens,
  };
  const reasoning = count(usage.reasoningTokens);
  if (options.reasoning && reasoning > 0) out.reasoningTokens = Math.min(reasoning, outputTokens);
  return out;
}

/**
 * Usage of a non-streaming response body. `inputTokens` includes cached tokens in every format
 * (Anthropic's input_tokens excludes cache reads and writes, so they are added back).
 */
export function usageOf(
  format: ApiFormat,
  responseBody: unknown,
  options: UsageOptions = {},
): TokenUsage {
  const raw = isRecord(responseBody) ? responseBody.usage : undefined;
  const usage =
    format === 'chat'
      ? usageOfChat(raw)
      : format === 'responses'
        ? usageOfResponses(raw)
        : usageOfMessages(raw);
  return toTokenUsage(usage, options);
}

/** Usage of a non-streaming response body, or undefined when the body reports none. */
export function reportedUsageOf(
  format: ApiFormat,
  responseBody: unknown,
  options: UsageOptions = {},
): TokenUsage | undefined {
  if (!isRecord(responseBody) || !isRecord(responseBody.usage)) return undefined;
  return usageOf(format, responseBody, options);
}

/** Accumulates the usage a seller reports inside a stream of `format`. */
export interface StreamUsageAccumulator {
  push(event: SseEvent): void;
  /** The usage seen so far (zeros until the seller reports it). */
  usage(): TokenUsage;
  /** True once the stream reached its terminal event. */
  readonly complete: boolean;
  /** True once the seller reported usage. */
  readonly reported: boolean;
  /** The first failure in the stream: a malformed event or an error event (nothing is read after it). */
  readonly error: StreamError | undefined;
  /**
   * True once the stream carried content before any failure: text, reasoning or a tool call. The
   * events before it (a role-only chunk, `message_start`, `ping`, `response.created`, an empty
   * block) are its preamble: a stream that fails in its preamble delivered nothing.
   */
  readonly content: boolean;
}

/** A part the client reads as the answer itself (a delta with text, or a named tool call). */
function isContent(part: StreamPart): boolean {
  if (part.type === 'block_delta') return part.text.length > 0;
  return part.type === 'block_start' && part.kind === 'tool_call';
}

/** A fresh usage accumulator for a stream of `format` (feed it the seller's events). */
export function createStreamUsageAccumulator(
  format: ApiFormat,
  options: UsageOptions = {},
): StreamUsageAccumulator {
  const parser = createStreamParser(format);
  let last: Usage | undefined;
  let complete = false;
  let error: StreamError | undefined;
  let content = false;
  return {
    push(event) {
      if (event.comment !== undefined) return;
      for (const part of parser.push(event)) {
        if (part.type === 'usage') last = part.usage;
        else if (part.type === 'done') complete = true;
        else if (part.type === 'error') error ??= part.error;
        else if (!content && error === undefined && isContent(part)) content = true;
      }
    },
    usage() {
      return last
        ? toTokenUsage(last, options)
        : { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
    },
    get complete() {
      return complete;
    },
    get reported() {
      return last !== undefined;
    },
    get error() {
      return error;
    },
    get content() {
      return content;
    },
  };
}
