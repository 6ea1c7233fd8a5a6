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

interface RankFile {
  pat_str: string;
  special_tokens: Record<string, number>;
  bpe_ranks: string;
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64.length; i++) BASE64_VALUE[BASE64.charCodeAt(i)] = i;

/**
 * The merge ranks of a js-tiktoken rank file, keyed as js-tiktoken's `encode` looks them up (the
 * token's bytes joined by ","). js-tiktoken's own constructor also builds the reverse map (one
 * Uint8Array per token, for `decode`, which counting never calls) through a 200,000-key object:
 * about 140 MiB of RSS for o200k_base; this builds only the ranks, without the intermediates
 * (decision 098; `tokens.test` checks the map equals js-tiktoken's).
 */
export function rankMapOf(file: RankFile): Map<string, number> {
  const ranks = new Map<string, number>();
  const text = file.bpe_ranks;
  const bytes = new Uint8Array(256);
  let line = 0;
  while (line < text.length) {
    let end = text.indexOf('\n', line);
    if (end < 0) end = text.length;
    // A line is "<name> <first rank> <base64 token> <base64 token> ...".
    const nameEnd = text.indexOf(' ', line);
    let cursor = text.indexOf(' ', nameEnd + 1);
    if (nameEnd < 0 || nameEnd >= end) {
      line = end + 1;
      continue;
    }
    if (cursor < 0 || cursor > end) cursor = end;
    let rank = Number.parseInt(text.slice(nameEnd + 1, cursor), 10);
    for (let start = cursor + 1; start < end; ) {
      let stop = text.indexOf(' ', start);
      if (stop < 0 || stop > end) stop = end;
      let length = 0;
      let acc = 0;
      let bits = 0;
      for (let i = start; i < stop; i++) {
        const value = BASE64_VALUE[text.charCodeAt(i)] ?? -1;
        if (value < 0) break; // '=' padding
        acc = ((acc << 6) | value) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
          bits -= 8;
          bytes[length++] = (acc >> bits) & 0xff;
        }
      }
      if (length > 0) ranks.set(bytes.subarray(0, length).join(','), rank);
      rank++;
      start = stop + 1;
    }
    line = end + 1;
  }
  return ranks;
}

function getEncoder(): Tiktoken {
  if (!encoder) {
    const lite = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
    const ranksPath = require.resolve('js-tiktoken/ranks/o200k_base');
    const module = require(ranksPath) as { default?: RankFile } & RankFile;
    const file = module.default ?? module;
    // An encoder with no ranks, then the ranks alone (see rankMapOf).
    const built = new lite.Tiktoken({ ...file, bpe_ranks: '' });
    const internal = built as unknown as { rankMap: Map<string, number> };
    internal.rankMap = rankMapOf(file);
    // The 2.3 MB rank text is not needed once the map is built: let it be collected.
    delete require.cache[ranksPath];
    encoder = built;
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
