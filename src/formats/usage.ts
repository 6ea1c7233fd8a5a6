/** Token usage of responses and streams in any format, normalised to svc's TokenUsage. */
import type { TokenUsage } from '../money/index.js';
import { usageOfChat } from './chat/response.js';
import { isRecord } from './check.js';
import { usageOfMessages } from './messages/response.js';
import type { Usage } from './model.js';
import { usageOfResponses } from './responses/response.js';
import type { SseEvent } from './sse.js';
import { createStreamParser } from './stream/codecs.js';
import type { ApiFormat } from './types.js';

function toTokenUsage(usage: Usage): TokenUsage {
  return {
    inputTokens: usage.inputTokens,
    cachedInputTokens: Math.min(usage.cachedInputTokens, usage.inputTokens),
    outputTokens: usage.outputTokens,
  };
}

/**
 * Usage of a non-streaming response body. `inputTokens` includes cached tokens in every format
 * (Anthropic's input_tokens excludes cache reads and writes, so they are added back).
 */
export function usageOf(format: ApiFormat, responseBody: unknown): TokenUsage {
  const raw = isRecord(responseBody) ? responseBody.usage : undefined;
  const usage =
    format === 'chat'
      ? usageOfChat(raw)
      : format === 'responses'
        ? usageOfResponses(raw)
        : usageOfMessages(raw);
  return toTokenUsage(usage);
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
}

/** A fresh usage accumulator for a stream of `format` (feed it the seller's events). */
export function createStreamUsageAccumulator(format: ApiFormat): StreamUsageAccumulator {
  const parser = createStreamParser(format);
  let last: Usage | undefined;
  let complete = false;
  return {
    push(event) {
      if (event.comment !== undefined) return;
      for (const part of parser.push(event)) {
        if (part.type === 'usage') last = part.usage;
        else if (part.type === 'done') complete = true;
      }
    },
    usage() {
      return last ? toTokenUsage(last) : { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
    },
    get complete() {
      return complete;
    },
    get reported() {
      return last !== undefined;
    },
  };
}
