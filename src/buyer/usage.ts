/**
 * Token usage reported in seller responses, for the spec 4.5 headers and the closing
 * `: svc-usage` comment: from a complete JSON body, or accumulated from SSE events.
 */
import type { TokenUsage } from '../money/index.js';
import type { ApiProtocol } from '../network/index.js';

type Json = Record<string, unknown>;

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

function obj(value: unknown): Json | undefined {
  return value && typeof value === 'object' ? (value as Json) : undefined;
}

/** Usage of a complete response body, or undefined when it reports none. */
export function usageFromBody(protocol: ApiProtocol, body: unknown): TokenUsage | undefined {
  const usage = obj(obj(body)?.usage);
  if (!usage) return undefined;
  if (protocol === 'openai-chat-completions') {
    return {
      inputTokens: num(usage.prompt_tokens),
      cachedInputTokens: num(obj(usage.prompt_tokens_details)?.cached_tokens),
      outputTokens: num(usage.completion_tokens),
    };
  }
  if (protocol === 'anthropic-messages') {
    const cached = num(usage.cache_read_input_tokens);
    return {
      inputTokens: num(usage.input_tokens) + cached + num(usage.cache_creation_input_tokens),
      cachedInputTokens: cached,
      outputTokens: num(usage.output_tokens),
    };
  }
  return {
    inputTokens: num(usage.input_tokens),
    cachedInputTokens: num(obj(usage.input_tokens_details)?.cached_tokens),
    outputTokens: num(usage.output_tokens),
  };
}

/** Reads SSE bytes as they pass and keeps the latest usage and the streamed text. */
export class StreamUsageScanner {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  usage: TokenUsage | undefined;
  /** Text of content deltas (for an estimate when no usage arrives). */
  text = '';

  constructor(private readonly protocol: ApiProtocol) {}

  push(chunk: Uint8Array): void {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    let newline = this.buffer.indexOf('\n');
    while (newline >= 0) {
      const line = this.buffer.slice(0, newline).trimEnd();
      this.buffer = this.buffer.slice(newline + 1);
      if (line.startsWith('data:')) this.onData(line.slice(5).trim());
      newline = this.buffer.indexOf('\n');
    }
  }

  private onData(data: string): void {
    if (!data.startsWith('{')) return;
    let event: Json;
    try {
      event = JSON.parse(data) as Json;
    } catch {
      return;
    }
    if (this.protocol === 'openai-chat-completions') {
      const usage = usageFromBody(this.protocol, event);
      if (usage) this.usage = usage;
      for (const choice of (event.choices as Json[] | undefined) ?? []) {
        const content = obj(choice.delta)?.content;
        if (typeof content === 'string') this.text += content;
      }
      return;
    }
    if (this.protocol === 'anthropic-messages') {
      const type = event.type;
      if (type === 'message_start') {
        const usage = usageFromBody(this.protocol, obj(event.message));
        if (usage) this.usage = usage;
      } else if (type === 'message_delta') {
        const delta = obj(event.usage);
        if (delta) {
          const base = this.usage ?? { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
          this.usage = {
            ...base,
            ...(delta.input_tokens !== undefined
              ? { inputTokens: Math.max(base.inputTokens, num(delta.input_tokens)) }
              : {}),
            outputTokens: num(delta.output_tokens),
          };
        }
      } else if (type === 'content_block_delta') {
        const text = obj(event.delta)?.text;
        if (typeof text === 'string') this.text += text;
      }
      return;
    }
    if (event.type === 'response.completed') {
      const usage = usageFromBody(this.protocol, obj(event.response));
      if (usage) this.usage = usage;
    } else if (event.type === 'response.output_text.delta' && typeof event.delta === 'string') {
      this.text += event.delta;
    }
  }
}
