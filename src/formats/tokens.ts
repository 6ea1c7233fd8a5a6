/**
 * Local token counting with js-tiktoken's o200k_base encoding. It is an approximation for
 * non-OpenAI models (Claude's tokenizer differs by roughly ±15% on English text); see
 * docs/decisions/022-count-tokens.md for the per-message, per-tool and per-image overheads.
 */
import { imageSizeOfBase64, imageTokensOfSize } from './imageSize.js';
import type { Conversation, Part } from './model.js';
import { TokenCounter } from './tokensBpe.js';
import { countInSlices } from './tokensQueue.js';
import { indexPairsFor, tablesAsync, tablesNow } from './tokensTables.js';
import { parseRequest } from './translateRequest.js';
import type { ApiFormat } from './types.js';

export { rankMapOf } from './tokensTables.js';

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
  const counter = new TokenCounter(text, tablesNow());
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
  if (text.length <= SYNC_COUNT_CHARS) {
    // Short texts count in one go, once the tables are there (built without blocking).
    await tablesAsync();
    return countTextTokens(text);
  }
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const tables = await tablesAsync();
  indexPairsFor(text.length, tables);
  const tokens = await countInSlices(new TokenCounter(text, tables));
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

/**
 * An upper bound of `estimateInputTokens` without counting: the same fixed overheads, and each
 * text's UTF-8 bytes for its tokens. o200k_base is byte-level BPE, so every token (a special
 * token included) stands for at least one byte of the text's UTF-8 encoding.
 */
export function inputTokensBound(format: ApiFormat, body: unknown): number {
  const { fixed, texts } = tallyConversation(parseRequest(body, format));
  let total = fixed;
  for (const text of texts) total += Buffer.byteLength(text, 'utf8');
  return total;
}

/** `estimateInputTokens` that yields while it counts. */
export async function estimateInputTokensAsync(format: ApiFormat, body: unknown): Promise<number> {
  return countConversationTokensAsync(parseRequest(body, format));
}
