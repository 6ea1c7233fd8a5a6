/**
 * The built-in demo provider: no model behind it, an offline agent-capable model
 * (src/seller/demo/, rules in docs/guide/selling.md "Demo model") answering in the chat, responses and messages
 * formats (streaming too) with honest usage, for local networks and tests. Its metadata says
 * `capabilities.demo: true`. Chat streams always end with the usage chunk, as relayed upstream
 * streams do (the seller asks upstreams for it).
 */
import { createHash } from 'node:crypto';
import {
  countTextTokensAsync,
  estimateInputTokensAsync,
  formatOfProtocol,
  maxOutputTokensOf,
} from '../formats/index.js';
import type { TokenUsage } from '../money/index.js';
import type { ApiProtocol } from '../network/index.js';
import {
  type Answer,
  answerOf,
  type Conversation,
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

/** The context the sampled words depend on: what the user said, or the tool results. */
function samplingContext(conversation: Conversation): string {
  return `${conversation.userText}\u0000${conversation.toolResults.join('\u0000')}`;
}

/** The longest prefix of `text` within `budget` tokens (found by bisection on characters). */
async function prefixWithin(text: string, budget: number): Promise<string> {
  if (budget <= 0) return '';
  if ((await countTextTokensAsync(text)) <= budget) return text;
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if ((await countTextTokensAsync(text.slice(0, middle))) <= budget) low = middle;
    else high = middle - 1;
  }
  return text.slice(0, low);
}

/**
 * Stops the reply at the request's output-token limit as the vendors do: reasoning first, then
 * text, cut at the limit; tool calls only when they fit whole (a cut call is no call). True when
 * the limit cut something.
 */
async function truncateTo(reply: DemoReply, limit: number): Promise<boolean> {
  const reasoningTokens = reply.reasoning ? await countTextTokensAsync(reply.reasoning) : 0;
  const textTokens = await countTextTokensAsync(reply.text);
  let callTokens = 0;
  for (const call of reply.calls)
    callTokens += await countTextTokensAsync(JSON.stringify(call.arguments));
  if (reasoningTokens + textTokens + callTokens <= limit) return false;
  if (reply.reasoning !== undefined) reply.reasoning = await prefixWithin(reply.reasoning, limit);
  const left = Math.max(0, limit - Math.min(reasoningTokens, limit));
  reply.text = await prefixWithin(reply.text, left);
  reply.calls = [];
  return true;
}

/**
 * Answers one demo request. The plan is deterministic; the text opens with words sampled from
 * the model `weights` (the service's `upstreamModel`; a seller announcing one model with
 * another's weights is the substitute audits catch) at the request's temperature, 1 by default
 * (src/seller/demo/sampler.ts; `random` replaces the system's draws in tests). The answer stops
 * at the request's output-token limit.
 */
export async function demoAnswer(
  protocol: ApiProtocol,
  model: string,
  body: Json,
  bodyBytes: number,
  { weights = model, random }: { weights?: string; random?: () => number } = {},
): Promise<DemoAnswer> {
  const conversation = readConversation(protocol, body);
  const reply = planReply(conversation);
  const sampling = samplingOf(body);
  const phrase = sampleWords(weights, samplingContext(conversation), sampling, random).join(' ');
  reply.text = `${phrase.charAt(0).toUpperCase()}${phrase.slice(1)}. ${reply.text}`;
  const format = formatOfProtocol(protocol);
  const limit = format ? maxOutputTokensOf(format, body) : undefined;
  const truncated =
    limit !== undefined && (await truncateTo(reply, Math.max(0, Math.floor(limit))));
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
    parts: render(protocol, answerOf(reply, model, hash, usage, truncated), stream),
    usage,
  };
}
