/**
 * Counts token usage from an upstream response as it passes through, for each API format,
 * JSON or SSE: OpenAI chat's final usage chunk, the responses API's `response.completed`,
 * Anthropic's `message_start` (input) and `message_delta` (cumulative output). It also tells
 * whether a stream ended properly, so a cut stream is reported, not billed as complete.
 */

import type { TokenUsage } from '../money/index.js';
import type { ApiProtocol } from '../network/index.js';
import { SseParser } from './wire/sse.js';

export interface MeterResult {
  usage?: TokenUsage;
  /** The response ended the way the format says a complete response ends. */
  complete: boolean;
  /** Why it is not complete (malformed JSON, cut stream, error event). */
  error?: string;
}

type Json = Record<string, unknown>;

function num(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

function obj(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Json)
    : undefined;
}

/** Usage from a non-streaming body of `protocol`. */
export function usageFromJson(protocol: ApiProtocol, body: Json): TokenUsage | undefined {
  const usage = obj(body.usage);
  if (!usage) return undefined;
  if (protocol === 'openai-chat-completions') {
    return withReasoning(
      {
        inputTokens: num(usage.prompt_tokens),
        cachedInputTokens: num(obj(usage.prompt_tokens_details)?.cached_tokens),
        outputTokens: num(usage.completion_tokens),
      },
      num(obj(usage.completion_tokens_details)?.reasoning_tokens),
    );
  }
  if (protocol === 'anthropic-messages') {
    const cached = num(usage.cache_read_input_tokens);
    return {
      inputTokens: num(usage.input_tokens) + cached + num(usage.cache_creation_input_tokens),
      cachedInputTokens: cached,
      outputTokens: num(usage.output_tokens),
    };
  }
  return withReasoning(
    {
      inputTokens: num(usage.input_tokens),
      cachedInputTokens: num(obj(usage.input_tokens_details)?.cached_tokens),
      outputTokens: num(usage.output_tokens),
    },
    num(obj(usage.output_tokens_details)?.reasoning_tokens),
  );
}

/** Adds hidden reasoning (part of the output) when the upstream reports some. */
function withReasoning(usage: TokenUsage, reasoning: number): TokenUsage {
  return reasoning > 0
    ? { ...usage, reasoningTokens: Math.min(reasoning, usage.outputTokens) }
    : usage;
}

/** Watches one upstream response body. */
export class UsageMeter {
  private readonly protocol: ApiProtocol;
  private readonly streaming: boolean;
  private readonly parser = new SseParser();
  private readonly jsonChunks: Uint8Array[] = [];
  private usage: TokenUsage | undefined;
  private done = false;
  private error: string | undefined;

  constructor(protocol: ApiProtocol, streaming: boolean) {
    this.protocol = protocol;
    this.streaming = streaming;
  }

  push(chunk: Uint8Array): void {
    if (!this.streaming) {
      this.jsonChunks.push(chunk);
      return;
    }
    for (const event of this.parser.push(chunk)) this.onEvent(event.event, event.data);
  }

  private onEvent(name: string | undefined, data: string): void {
    if (this.protocol === 'openai-chat-completions' && data === '[DONE]') {
      this.done = true;
      return;
    }
    let parsed: Json | undefined;
    try {
      parsed = obj(JSON.parse(data));
    } catch {
      this.error ??= 'upstream sent an SSE event that is not JSON';
      return;
    }
    if (!parsed) return;
    const type = typeof parsed.type === 'string' ? parsed.type : name;
    if (this.protocol === 'openai-chat-completions') {
      if (obj(parsed.usage)) this.usage = usageFromJson(this.protocol, parsed);
      if (obj(parsed.error)) this.error ??= 'upstream sent an error event';
    } else if (this.protocol === 'openai-responses') {
      if (
        type === 'response.completed' ||
        type === 'response.incomplete' ||
        type === 'response.failed'
      ) {
        const response = obj(parsed.response);
        if (response) this.usage = usageFromJson(this.protocol, response);
        this.done = true;
        if (type === 'response.failed') this.error ??= 'upstream response failed';
      } else if (type === 'error') this.error ??= 'upstream sent an error event';
    } else if (this.protocol === 'anthropic-messages') {
      if (type === 'message_start') {
        const message = obj(parsed.message);
        if (message) this.usage = usageFromJson(this.protocol, message);
      } else if (type === 'message_delta') {
        const usage = obj(parsed.usage);
        if (usage && this.usage) {
          this.usage = { ...this.usage, outputTokens: num(usage.output_tokens) };
          if (typeof usage.input_tokens === 'number') {
            this.usage = usageFromJson(this.protocol, {
              usage: { ...this.usageAsAnthropic(), ...usage },
            });
          }
        }
      } else if (type === 'message_stop') this.done = true;
      else if (type === 'error') this.error ??= 'upstream sent an error event';
    }
  }

  private usageAsAnthropic(): Json {
    const usage = this.usage ?? { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
    return {
      input_tokens: usage.inputTokens - usage.cachedInputTokens,
      cache_read_input_tokens: usage.cachedInputTokens,
      output_tokens: usage.outputTokens,
    };
  }

  /** Result once the body has ended. */
  finish(): MeterResult {
    if (!this.streaming) {
      let parsed: Json | undefined;
      try {
        parsed = obj(JSON.parse(Buffer.concat(this.jsonChunks).toString('utf8')));
      } catch {
        return { complete: false, error: 'upstream returned malformed JSON' };
      }
      if (!parsed) return { complete: false, error: 'upstream returned malformed JSON' };
      const usage = usageFromJson(this.protocol, parsed);
      return { ...(usage ? { usage } : {}), complete: true };
    }
    const complete = this.done && this.error === undefined;
    const error =
      this.error ?? (this.done ? undefined : 'upstream stream ended before its final event');
    return { ...(this.usage ? { usage: this.usage } : {}), complete, ...(error ? { error } : {}) };
  }
}
