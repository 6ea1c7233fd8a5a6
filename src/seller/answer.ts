/**
 * A generated answer (the demo provider's, the fake upstreams') in any of the three formats,
 * rendered by src/formats, where each vendor wire format is written once: the JSON body, or the
 * stream with the text in word-sized deltas and the usage known from the start (Anthropic puts
 * the input count in `message_start`).
 */
import {
  type ApiFormat,
  formatSse,
  type ModelResponse,
  renderResponse,
  renderResponseStream,
} from '../formats/index.js';
import type { TokenUsage } from '../money/index.js';

export interface AnswerSpec {
  /** Model id echoed in the response. */
  model: string;
  /** The assistant's text. */
  text: string;
  usage: TokenUsage;
  /** Pieces the text is streamed in (default: words). */
  chunks?: string[];
  /** Unix seconds for `created` fields. */
  created?: number;
}

/** Splits text into word-sized stream pieces (keeping spaces), as vendors roughly do. */
export function textChunks(spec: AnswerSpec): string[] {
  if (spec.chunks) return spec.chunks;
  const pieces = spec.text.match(/\S+\s*|\s+/g) ?? [];
  return pieces.length > 0 ? pieces : [''];
}

function modelResponse(spec: AnswerSpec): ModelResponse {
  const { inputTokens, cachedInputTokens, outputTokens, reasoningTokens } = spec.usage;
  return {
    id: '',
    model: spec.model,
    created: spec.created ?? Math.floor(Date.now() / 1000),
    parts: [{ type: 'text', text: spec.text }],
    stopReason: 'end_turn',
    usage: {
      inputTokens,
      cachedInputTokens,
      cacheCreationInputTokens: 0,
      outputTokens,
      ...(reasoningTokens !== undefined ? { reasoningTokens } : {}),
    },
  };
}

/** The non-streaming body of the answer in `format`. */
export function answerJson(format: ApiFormat, spec: AnswerSpec): Record<string, unknown> {
  return renderResponse(modelResponse(spec), format);
}

/** The SSE text of the streamed answer in `format`, one string per event. */
export function answerSse(
  format: ApiFormat,
  spec: AnswerSpec,
  options: { includeUsage: boolean } = { includeUsage: true },
): string[] {
  const ctx = {
    includeUsage: options.includeUsage,
    ...(spec.created !== undefined ? { now: () => spec.created! * 1000 } : {}),
  };
  return renderResponseStream(modelResponse(spec), format, ctx, {
    pieces: (text) => (text === spec.text ? textChunks(spec) : [text]),
    usageFirst: true,
  }).map(formatSse);
}
