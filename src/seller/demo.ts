/**
 * The built-in demo provider: no model behind it, deterministic answers in the chat,
 * responses and messages formats (streaming too) with honest usage, for local networks and
 * tests. Its metadata says `capabilities.demo: true`. Chat streams always end with the usage
 * chunk, as relayed upstream streams do (the seller asks upstreams for it).
 */

import { countTextTokens, estimateInputTokensAsync, formatOfProtocol } from '../formats/index.js';
import type { TokenUsage } from '../money/index.js';
import type { ApiProtocol } from '../network/index.js';
import { messageJson, messageSse } from './wire/anthropicMessages.js';
import { chatCompletionJson, chatCompletionSse } from './wire/openaiChat.js';
import { responseJson, responseSse } from './wire/openaiResponses.js';
import type { AnswerSpec } from './wire/types.js';

type Json = Record<string, unknown>;

/** The last user text of a request in any of the three formats. */
function lastUserText(protocol: ApiProtocol, body: Json): string {
  const source = protocol === 'openai-responses' ? body.input : body.messages;
  if (typeof source === 'string') return source;
  if (!Array.isArray(source)) return '';
  for (let i = source.length - 1; i >= 0; i--) {
    const message = source[i] as Json;
    if (message?.role !== 'user') continue;
    const content = message.content;
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      return content
        .map((part: Json) => (typeof part?.text === 'string' ? part.text : ''))
        .join(' ')
        .trim();
    }
  }
  return '';
}

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

/** Answers one demo request deterministically. */
export async function demoAnswer(
  protocol: ApiProtocol,
  model: string,
  body: Json,
  bodyBytes: number,
): Promise<DemoAnswer> {
  const said = lastUserText(protocol, body).replace(/\s+/g, ' ').slice(0, 80);
  const text = `This is the svc demo provider (no model behind it). You said: "${said}".`;
  const usage: TokenUsage = {
    inputTokens: await demoInputTokens(protocol, body, bodyBytes),
    cachedInputTokens: 0,
    outputTokens: countTextTokens(text),
  };
  const spec: AnswerSpec = { model, text, usage, id: 'svcdemo0000000000000001' };
  const stream = body.stream === true;
  if (!stream) {
    const json =
      protocol === 'openai-responses'
        ? responseJson(spec)
        : protocol === 'anthropic-messages'
          ? messageJson(spec)
          : chatCompletionJson(spec);
    return { status: 200, contentType: 'application/json', parts: [JSON.stringify(json)], usage };
  }
  const parts =
    protocol === 'openai-responses'
      ? responseSse(spec)
      : protocol === 'anthropic-messages'
        ? messageSse(spec)
        : chatCompletionSse(spec, { includeUsage: true });
  return { status: 200, contentType: 'text/event-stream; charset=utf-8', parts, usage };
}
