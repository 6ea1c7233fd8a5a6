/**
 * JSON request bodies that must be one object, the one way a stranger's JSON body becomes a value
 * (buyer, gateway, console and seller): strict UTF-8 (a body that is not UTF-8 is refused, not
 * silently mended with U+FFFD and billed), nesting bounded before `JSON.parse` (the recursive walks
 * after it — validation, token estimates — would otherwise overflow the stack on a 100k-deep body),
 * and the parse position in the error.
 */
import type { IncomingMessage } from 'node:http';
import { errorMessage, SvcError } from '../errors/index.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/** Deepest nesting of arrays and objects a request body may have. */
const MAX_JSON_DEPTH = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when `bytes`, read as JSON (strings skipped), nest deeper than `limit`. A string is skipped
 * by searching for its closing quote (a native search: prompts are mostly string bytes); a quote
 * closes it when an even number of backslashes precede it.
 */
function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      i = closingQuote(bytes, i);
      if (i < 0) return false;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth++;
      if (depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** The index of the quote closing the string opened at `open`, or -1 when none does. */
function closingQuote(bytes: Uint8Array, open: number): number {
  let quote = bytes.indexOf(QUOTE, open + 1);
  while (quote !== -1) {
    // bytes[open] is a quote, so the backslash run stops there at the latest.
    let before = quote - 1;
    while (bytes[before] === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote;
    quote = bytes.indexOf(QUOTE, quote + 1);
  }
  return -1;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses bytes that must hold one JSON object. Throws 400 `invalid_json` for bytes that are not
 * UTF-8, text that is not JSON (with the parser's message and byte position when it gives one)
 * or JSON that is not an object, and 400 `invalid_request` for nesting deeper than
 * MAX_JSON_DEPTH.
 */
export function parseJsonObject(bytes: Uint8Array): Record<string, unknown> {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (error) {
    throw new SvcError('invalid_json', {
      message: 'The request body is not valid UTF-8; send JSON encoded as UTF-8.',
      cause: error,
    });
  }
  if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) {
    throw new SvcError('invalid_request', {
      message: `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
      details: { maxDepth: MAX_JSON_DEPTH },
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = errorMessage(error);
    const position = /position (\d+)/.exec(message)?.[1];
    throw new SvcError('invalid_json', {
      message: `The request body is not valid JSON: ${message}`,
      details: position === undefined ? {} : { position: Number(position) },
      cause: error,
    });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new SvcError('invalid_json', { message: 'The request body must be a JSON object.' });
  }
  return value as Record<string, unknown>;
}

/** True when the request says its body is JSON (`application/json`, `application/x+json`). */
export function isJsonRequest(req: Pick<IncomingMessage, 'headers'>): boolean {
  return JSON_TYPE.test(req.headers['content-type'] ?? '');
}

/** A request's JSON object body: 415 `unsupported_media_type` unless it is sent as JSON. */
export function parseJsonRequest(
  req: Pick<IncomingMessage, 'headers'>,
  raw: Uint8Array,
): Record<string, unknown> {
  const type = req.headers['content-type'] ?? '';
  if (!isJsonRequest(req)) {
    throw new SvcError('unsupported_media_type', {
      message: `Send the body as application/json (got ${type ? `"${type}"` : 'no content type'}).`,
    });
  }
  return parseJsonObject(raw);
}
