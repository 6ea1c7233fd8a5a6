/**
 * The one way a JSON body from a stranger becomes a value: strict UTF-8 (a body that is not UTF-8
 * is refused, not silently mended with U+FFFD and billed), nesting bounded before `JSON.parse`
 * (the recursive walks after it — validation, token estimates — would otherwise overflow the
 * stack on a 100k-deep body), and the parse position in the error.
 */
import { SvcError } from '../errors/index.js';

/** Deepest nesting of arrays and objects a request body may have. */
export const MAX_JSON_DEPTH = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Deepest nesting of `bytes` read as JSON (strings skipped), stopping once past `limit`. */
export function jsonDepthOf(bytes: Uint8Array, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
  }
  return deepest;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses a request body as JSON. Throws SvcError `invalid_json` (not UTF-8, or not JSON, with
 * the position) or `invalid_request` (nested deeper than MAX_JSON_DEPTH).
 */
export function parseJsonBody(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new SvcError('invalid_json', {
      message: 'The request body is not valid UTF-8; send JSON encoded as UTF-8.',
    });
  }
  if (jsonDepthOf(bytes) > MAX_JSON_DEPTH) {
    throw new SvcError('invalid_request', {
      message: `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
      details: { maxDepth: MAX_JSON_DEPTH },
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const position = /position (\d+)/.exec(message)?.[1];
    throw new SvcError('invalid_json', {
      message: `The request body is not valid JSON: ${message}`,
      details: position === undefined ? {} : { position: Number(position) },
    });
  }
}
