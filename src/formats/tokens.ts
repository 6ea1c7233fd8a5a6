/**
 * Local token counting with js-tiktoken's o200k_base encoding. It is an approximation for
 * non-OpenAI models (Claude's tokenizer differs by roughly ±15% on English text); see
 * docs/decisions/022-count-tokens.md for the per-message, per-tool and per-image overheads.
 */
import { createRequire } from 'node:module';
import type { Tiktoken } from 'js-tiktoken/lite';
import { imageSizeOfBase64, imageTokensOfSize } from './imageSize.js';
import type { Conversation, Part } from './model.js';
import { parseRequest } from './translateRequest.js';
import type { ApiFormat } from './types.js';

/** Tokens added per message for role and separators (OpenAI's documented chat overhead). */
export const TOKENS_PER_MESSAGE = 3;
/** Tokens that prime the assistant's reply. */
export const TOKENS_PER_REPLY = 3;
/** Tokens per tool definition beyond its name, description and JSON schema. */
export const TOKENS_PER_TOOL = 8;
/** Bytes of a PDF per estimated token (PDF pages cost text tokens plus an image each). */
export const BYTES_PER_DOCUMENT_TOKEN = 4;
/**
 * Estimate per image whose size is unknown (by URL or unreadable header): Anthropic's figure for
 * a ~1.15 megapixel image. Base64 PNG/GIF/JPEG images use width × height / 750.
 */
export const TOKENS_PER_IMAGE = 1600;

const require = createRequire(import.meta.url);
let encoder: Tiktoken | undefined;

function getEncoder(): Tiktoken {
  if (!encoder) {
    const lite = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
    const ranks = require('js-tiktoken/ranks/o200k_base') as { default?: unknown };
    encoder = new lite.Tiktoken(
      (ranks.default ?? ranks) as ConstructorParameters<typeof lite.Tiktoken>[0],
    );
  }
  return encoder;
}

// Conversations resend their history every turn: remember counts of texts (bounded by entries and
// by total characters, oldest first out).
const CACHE_MIN_CHARS = 24;
const CACHE_MAX_ENTRIES = 20_000;
const CACHE_MAX_CHARS = 8_000_000;
const cache = new Map<string, number>();
let cachedChars = 0;

/** Tokens of a text under o200k_base (cached). */
export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length < CACHE_MIN_CHARS) return getEncoder().encode(text, 'all').length;
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const count = getEncoder().encode(text, 'all').length;
  if (text.length > CACHE_MAX_CHARS / 4) return count;
  cache.set(text, count);
  cachedChars += text.length;
  while (cache.size > CACHE_MAX_ENTRIES || cachedChars > CACHE_MAX_CHARS) {
    const oldest = cache.keys().next().value;
    if (oldest === undefined) break;
    cache.delete(oldest);
    cachedChars -= oldest.length;
  }
  return count;
}

function partTokens(part: Part): number {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return countTextTokens(part.text);
    case 'image': {
      if (part.source.kind !== 'base64') return TOKENS_PER_IMAGE;
      const size = imageSizeOfBase64(part.source.data);
      return size ? imageTokensOfSize(size.width, size.height) : TOKENS_PER_IMAGE;
    }
    case 'document':
      if (part.source.kind === 'text') return countTextTokens(part.source.text);
      // A PDF's text is not extracted here: about one token per 4 bytes of file, 1 page if by URL.
      return part.source.kind === 'base64'
        ? Math.ceil((part.source.data.length * 3) / 4 / BYTES_PER_DOCUMENT_TOKEN)
        : TOKENS_PER_IMAGE;
    case 'tool_call':
      return countTextTokens(part.name) + countTextTokens(part.arguments) + TOKENS_PER_MESSAGE;
    case 'tool_result':
      return part.content.reduce((sum, p) => sum + partTokens(p), TOKENS_PER_MESSAGE);
  }
}

/** Estimated input tokens of a parsed conversation. */
export function countConversationTokens(conv: Conversation): number {
  let total = TOKENS_PER_REPLY;
  for (const text of conv.system) total += TOKENS_PER_MESSAGE + countTextTokens(text);
  for (const turn of conv.turns) {
    total += TOKENS_PER_MESSAGE;
    for (const part of turn.parts) total += partTokens(part);
  }
  for (const tool of conv.tools) {
    total +=
      TOKENS_PER_TOOL +
      countTextTokens(tool.name) +
      countTextTokens(tool.description ?? '') +
      countTextTokens(JSON.stringify(tool.parameters));
  }
  if (conv.outputFormat?.type === 'json_schema')
    total += countTextTokens(JSON.stringify(conv.outputFormat.schema));
  return total;
}

/**
 * `/v1/messages/count_tokens`: `{input_tokens}` for a messages request body (max_tokens is not
 * required here). Throws SvcError 400 naming the field when the body is invalid.
 */
export function countTokens(messagesRequestBody: unknown): { input_tokens: number } {
  const body =
    typeof messagesRequestBody === 'object' &&
    messagesRequestBody !== null &&
    !('max_tokens' in messagesRequestBody)
      ? { ...messagesRequestBody, max_tokens: 1 }
      : messagesRequestBody;
  return { input_tokens: countConversationTokens(parseRequest(body, 'messages')) };
}

/** Estimated input tokens of a request body of any format (for checking sellers' claims). */
export function estimateInputTokens(format: ApiFormat, body: unknown): number {
  return countConversationTokens(parseRequest(body, format));
}
