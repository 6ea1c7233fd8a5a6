/**
 * The built-in demo provider: no model behind it, a deterministic agent-capable model
 * (src/seller/demo/, rules in README "Demo model") answering in the chat, responses and messages
 * formats (streaming too) with honest usage, for local networks and tests. Its metadata says
 * `capabilities.demo: true`. Chat streams always end with the usage chunk, as relayed upstream
 * streams do (the seller asks upstreams for it).
 */
import { createHash } from 'node:crypto';
import {
  countTextTokensAsync,
  estimateInputTokensAsync,
  formatOfProtocol,
} from '../formats/index.js';
import type { TokenUsage } from '../money/index.js';
import type { ApiProtocol } from '../network/index.js';
import {
  type Answer,
  answerOf,
  chatJson,
  chatSse,
  type DemoReply,
  messagesJson,
  messagesSse,
  planReply,
  readConversation,
  responsesJson,
  responsesSse,
  sampleWords,
  samplingOf,
} from './demo/index.js';

type Json = Record<string, unknown>;

export interface DemoAnswer {
  status: number;
  contentType: string;
  /** Whole body (JSON) or SSE events. */
  parts: string[];
  usage: TokenUsage;
}

/**
 * Honest usage means counting the way a vendor does: the conversation's tokens under a real
 * tokenizer (the buyer checks claims against the same kind of count, decision 033), not the JSON
 * body's bytes, which made every demo claim look inflated and got honest demo sellers penalised.
 */
async function demoInputTokens(
  protocol: ApiProtocol,
  body: Json,
  bodyBytes: number,
): Promise<number> {
  const format = formatOfProtocol(protocol);
  try {
    // A stranger's text: counted on the tokenizer's yielding path (decision 100).
    if (format) return await estimateInputTokensAsync(format, body);
  } catch {
    // A body the parser refuses still gets an answer: fall back to about 4 bytes per token.
  }
  return Math.max(1, Math.ceil(bodyBytes / 4));
}

/** Prompts shorter than this are never cached, as with the vendors' minimum cacheable prefix. */
const MIN_CACHED_PROMPT_TOKENS = 1024;
/** Cache reads come in blocks of this many tokens (the vendors' cache granularity). */
const CACHE_BLOCK_TOKENS = 128;

/** Usage of a reply: cache markers on a long prompt make three quarters of it a cache read. */
async function usageOf(
  reply: DemoReply,
  inputTokens: number,
  cacheMarked: boolean,
): Promise<TokenUsage> {
  const cachedInputTokens =
    cacheMarked && inputTokens >= MIN_CACHED_PROMPT_TOKENS
      ? Math.floor((inputTokens * 3) / 4 / CACHE_BLOCK_TOKENS) * CACHE_BLOCK_TOKENS
      : 0;
  const visible = [
    reply.text,
    reply.reasoning ?? '',
    ...reply.calls.map((c) => JSON.stringify(c.arguments)),
  ];
  // The reply may quote a stranger's text (a tool result): counted on the yielding path too.
  let outputTokens = 0;
  for (const text of visible) if (text) outputTokens += await countTextTokensAsync(text);
  return { inputTokens, cachedInputTokens, outputTokens };
}

function render(protocol: ApiProtocol, answer: Answer, stream: boolean): string[] {
  if (protocol === 'openai-responses') {
    return stream ? responsesSse(answer) : [JSON.stringify(responsesJson(answer))];
  }
  if (protocol === 'anthropic-messages') {
    return stream ? messagesSse(answer) : [JSON.stringify(messagesJson(answer))];
  }
  return stream ? chatSse(answer) : [JSON.stringify(chatJson(answer))];
}

/**
 * Answers one demo request: deterministically, except for the sampled continuation of a text
 * answer to a request that sets `temperature` or `seed` (src/seller/demo/sampler.ts), drawn
 * from the model `weights` (the service's `upstreamModel`; a seller announcing one model with
 * another's weights is the substitute audits catch).
 */
export async function demoAnswer(
  protocol: ApiProtocol,
  model: string,
  body: Json,
  bodyBytes: number,
  weights: string = model,
): Promise<DemoAnswer> {
  const conversation = readConversation(protocol, body);
  const reply = planReply(conversation);
  const sampling = samplingOf(body);
  if (sampling && reply.calls.length === 0 && conversation.toolResults.length === 0) {
    const words = sampleWords(weights, conversation.userText, sampling);
    reply.text = `${reply.text} Sampled: ${words.join(' ')}.`;
  }
  const usage = await usageOf(
    reply,
    await demoInputTokens(protocol, body, bodyBytes),
    conversation.cacheMarked,
  );
  const hash = createHash('sha256').update(JSON.stringify(body)).digest('hex');
  const stream = body.stream === true;
  return {
    status: 200,
    contentType: stream ? 'text/event-stream; charset=utf-8' : 'application/json',
    parts: render(protocol, answerOf(reply, model, hash, usage), stream),
    usage,
  };
}
