/**
 * Local token counting with js-tiktoken's o200k_base encoding. It is an approximation for
 * non-OpenAI models (Claude's tokenizer differs by roughly ±15% on English text); see
 * docs/decisions/022-count-tokens.md for the per-message, per-tool and per-image overheads.
 */
import { createRequire } from 'node:module';
import { imageSizeOfBase64, imageTokensOfSize } from './imageSize.js';
import type { Conversation, Part } from './model.js';
import { type BpeTables, TokenCounter } from './tokensBpe.js';
import { countInSlices } from './tokensQueue.js';
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
let tables: BpeTables | undefined;

interface RankFile {
  pat_str: string;
  special_tokens: Record<string, number>;
  bpe_ranks: string;
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64.length; i++) BASE64_VALUE[BASE64.charCodeAt(i)] = i;

/**
 * The merge ranks of a js-tiktoken rank file, keyed by the token's bytes as a latin1 string (one
 * char per byte). js-tiktoken's own constructor also builds the reverse map (one Uint8Array per
 * token, for `decode`, which counting never calls) through a 200,000-key object: about 140 MiB
 * of RSS for o200k_base; this builds only the ranks, without the intermediates (decision 098;
 * `tokens.test` checks the map equals js-tiktoken's).
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
      if (length > 0) ranks.set(String.fromCharCode(...bytes.subarray(0, length)), rank);
      rank++;
      start = stop + 1;
    }
    line = end + 1;
  }
  return ranks;
}

function getTables(): BpeTables {
  if (!tables) {
    const ranksPath = require.resolve('js-tiktoken/ranks/o200k_base');
    const module = require(ranksPath) as { default?: RankFile } & RankFile;
    const file = module.default ?? module;
    tables = {
      ranks: rankMapOf(file),
      pattern: file.pat_str,
      specialTokens: Object.keys(file.special_tokens),
    };
    // The 2.3 MB rank text is not needed once the map is built: let it be collected.
    delete require.cache[ranksPath];
  }
  return tables;
}

// Conversations resend their history every turn: remember counts of texts (bounded by entries and
// by total characters, oldest first out).
const CACHE_MIN_CHARS = 24;
const CACHE_MAX_ENTRIES = 20_000;
const CACHE_MAX_CHARS = 8_000_000;
const cache = new Map<string, number>();
let cachedChars = 0;

function remember(text: string, count: number): number {
  if (text.length < CACHE_MIN_CHARS || text.length > CACHE_MAX_CHARS / 4) return count;
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

/**
 * Tokens of a text under o200k_base (cached), in time linear in its length (decision 100). It
 * runs to the end: a request path counts through `countTextTokensAsync`, which yields.
 */
export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const counter = new TokenCounter(text, getTables());
  counter.step(Number.POSITIVE_INFINITY);
  return remember(text, counter.tokens);
}

/** Texts up to this length are counted in one go (a few milliseconds at worst). */
export const SYNC_COUNT_CHARS = 8_192;
/**
 * `countTextTokens` that yields to the event loop: long texts are counted in slices shared with
 * every other pending count, so a megabyte of adversarial text never blocks other requests
 * (decision 100).
 */
export async function countTextTokensAsync(text: string): Promise<number> {
  if (text.length <= SYNC_COUNT_CHARS) return countTextTokens(text);
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const tokens = await countInSlices(new TokenCounter(text, getTables()));
  return remember(text, tokens);
}

/** What a conversation costs: fixed overheads plus texts still to count. */
interface TokenTally {
  fixed: number;
  texts: string[];
}

function tallyPart(part: Part, tally: TokenTally): void {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      tally.texts.push(part.text);
      return;
    case 'image': {
      if (part.source.kind !== 'base64') {
        tally.fixed += TOKENS_PER_IMAGE;
        return;
      }
      const size = imageSizeOfBase64(part.source.data);
      tally.fixed += size ? imageTokensOfSize(size.width, size.height) : TOKENS_PER_IMAGE;
      return;
    }
    case 'document':
      if (part.source.kind === 'text') tally.texts.push(part.source.text);
      // A PDF's text is not extracted here: about one token per 4 bytes of file, 1 page if by URL.
      else
        tally.fixed +=
          part.source.kind === 'base64'
            ? Math.ceil((part.source.data.length * 3) / 4 / BYTES_PER_DOCUMENT_TOKEN)
            : TOKENS_PER_IMAGE;
      return;
    case 'tool_call':
      tally.texts.push(part.name, part.arguments);
      tally.fixed += TOKENS_PER_MESSAGE;
      return;
    case 'tool_result':
      tally.fixed += TOKENS_PER_MESSAGE;
      for (const inner of part.content) tallyPart(inner, tally);
      return;
  }
}

function tallyConversation(conv: Conversation): TokenTally {
  const tally: TokenTally = { fixed: TOKENS_PER_REPLY, texts: [] };
  for (const text of conv.system) {
    tally.fixed += TOKENS_PER_MESSAGE;
    tally.texts.push(text);
  }
  for (const turn of conv.turns) {
    tally.fixed += TOKENS_PER_MESSAGE;
    for (const part of turn.parts) tallyPart(part, tally);
  }
  for (const tool of conv.tools) {
    tally.fixed += TOKENS_PER_TOOL;
    tally.texts.push(tool.name, tool.description ?? '', JSON.stringify(tool.parameters));
  }
  if (conv.outputFormat?.type === 'json_schema')
    tally.texts.push(JSON.stringify(conv.outputFormat.schema));
  return tally;
}

/** Estimated input tokens of a parsed conversation. */
export function countConversationTokens(conv: Conversation): number {
  const { fixed, texts } = tallyConversation(conv);
  return texts.reduce((sum, text) => sum + countTextTokens(text), fixed);
}

/** `countConversationTokens` that yields while it counts long texts. */
export async function countConversationTokensAsync(conv: Conversation): Promise<number> {
  const { fixed, texts } = tallyConversation(conv);
  let total = fixed;
  for (const text of texts) total += await countTextTokensAsync(text);
  return total;
}

function withMaxTokens(messagesRequestBody: unknown): unknown {
  return typeof messagesRequestBody === 'object' &&
    messagesRequestBody !== null &&
    !('max_tokens' in messagesRequestBody)
    ? { ...messagesRequestBody, max_tokens: 1 }
    : messagesRequestBody;
}

/**
 * `/v1/messages/count_tokens`: `{input_tokens}` for a messages request body (max_tokens is not
 * required here). Throws SvcError 400 naming the field when the body is invalid.
 */
export function countTokens(messagesRequestBody: unknown): { input_tokens: number } {
  const conv = parseRequest(withMaxTokens(messagesRequestBody), 'messages');
  return { input_tokens: countConversationTokens(conv) };
}

/** `countTokens` that yields while it counts (the request path's form). */
export async function countTokensAsync(
  messagesRequestBody: unknown,
): Promise<{ input_tokens: number }> {
  const conv = parseRequest(withMaxTokens(messagesRequestBody), 'messages');
  return { input_tokens: await countConversationTokensAsync(conv) };
}

/** Estimated input tokens of a request body of any format (for checking sellers' claims). */
export function estimateInputTokens(format: ApiFormat, body: unknown): number {
  return countConversationTokens(parseRequest(body, format));
}

/** `estimateInputTokens` that yields while it counts. */
export async function estimateInputTokensAsync(format: ApiFormat, body: unknown): Promise<number> {
  return countConversationTokensAsync(parseRequest(body, format));
}
