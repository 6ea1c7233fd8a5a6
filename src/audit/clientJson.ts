/**
 * How a client wrote its JSON, learned from its bytes, so a probe copied from its request is
 * written the same way (docs/decisions/218-probe-tells-closed.md): its spacing, the numbers it
 * wrote otherwise than `JSON.stringify` would, the escapes and final line feed of its encoder,
 * and the order of keys a JavaScript object would move
 * (docs/decisions/223-key-order-and-id-time.md).
 */

/**
 * A number as the client wrote it, where that is not how JavaScript writes it: Python writes
 * `1.0` and `1e-05` where `JSON.stringify` writes `1` and `0.00001`. A copy keeps the client's
 * text.
 */
export class NumberText {
  constructor(readonly text: string) {}
}

/**
 * An object whose keys the client wrote in an order a JavaScript object does not keep: one puts
 * integer-like keys ("50256", "13") first, ascending, so `{"50256": -100, "13": 2}` or
 * `{"b": 1, "10": 2}` would be written back reordered. Its entries, in the client's order. Only
 * such objects are made: any other keeps its order as a plain object.
 */
export class OrderedObject<T = unknown> {
  constructor(readonly entries: readonly (readonly [string, T])[]) {}
}

/** An object as the client ordered it: a plain one, or an `OrderedObject`. */
export type WrittenObject<T> = OrderedObject<T> | { readonly [key: string]: T };

/** The entries of `object` in the order the client wrote them. */
export function entriesOf<T>(object: WrittenObject<T>): readonly (readonly [string, T])[] {
  return object instanceof OrderedObject
    ? (object as OrderedObject<T>).entries
    : Object.entries(object as { readonly [key: string]: T });
}

/** `entries` as an object of the same kind as `like`: ordered only if `like` was. */
export function objectLike<T>(
  like: WrittenObject<unknown>,
  entries: [string, T][],
): OrderedObject<T> | Record<string, T> {
  return like instanceof OrderedObject ? new OrderedObject(entries) : Object.fromEntries(entries);
}

/** `object` with each value mapped, of the same kind and in the same order. */
export function mapObject<T, U>(object: WrittenObject<T>, map: (value: T) => U) {
  return objectLike(
    object,
    entriesOf(object).map(([key, value]): [string, U] => [key, map(value)]),
  );
}

/**
 * What a client's JSON encoder does that `JSON.stringify` does not, as its bytes show:
 * `html`, Go's `encoding/json` writing `<`, `>`, `&`, U+2028 and U+2029 as `\u003c`…; `slash`,
 * PHP's `json_encode` writing `/` as `\/`; `newline`, a body ending in a line feed (Go's
 * `json.Encoder`). A probe written without them shows the seller a client that changed its
 * encoder for one request.
 */
export interface Escaping {
  html: boolean;
  slash: boolean;
  newline: boolean;
}

/** How one request's body was written. */
export interface ClientWriting {
  /**
   * The parsed body, with `NumberText` where the client wrote a number its own way and
   * `OrderedObject` where it ordered keys otherwise than a JavaScript object does.
   */
  body: unknown;
  /** `", "` / `": "` separators (Python clients) instead of none. */
  spaced: boolean;
  escaping?: Escaping;
}

/** An escape (`\u003c`, `\/`) not itself escaped: an odd run of backslashes before it. */
const HTML_ESCAPE = /(?<!\\)(?:\\\\)*\\u00(?:3[cCeE]|26)/;
const SLASH_ESCAPE = /(?<!\\)(?:\\\\)*\\\//;
const SPACED = /^\{\s*"[^"]*": /;

function escapingOf(text: string): Escaping | undefined {
  const escaping = {
    html: HTML_ESCAPE.test(text),
    slash: SLASH_ESCAPE.test(text),
    newline: text.endsWith('\n'),
  };
  return escaping.html || escaping.slash || escaping.newline ? escaping : undefined;
}

/** JSON.parse's reviver with the source text of each primitive (Node 21 and later). */
type SourceReviver = (key: string, value: unknown, context?: { source?: string }) => unknown;

/** A key a JavaScript object moves to the front: an array index, "0" to "4294967294". */
const INDEX_KEY = /^(?:0|[1-9][0-9]{0,9})$/;
const isIndexKey = (key: string) => INDEX_KEY.test(key) && Number(key) < 4_294_967_295;
/** The cheap first test: JSON text holding something like an integer-like key. */
const INDEX_KEY_TEXT = /"(?:0|[1-9][0-9]{0,9})"\s*:/;
/**
 * Each string of JSON text, with the colon after it when it is a key. Matched from the start,
 * every match begins at a string's opening quote: outside strings JSON has no quote.
 */
const STRING_TEXT = /"[^"\\]*(?:\\.[^"\\]*)*"(\s*:)?/g;
/** Put before each integer-like key so that parsing leaves it in place; no client key has it. */
const MARK = '\u0000';

/**
 * Valid JSON `text` with each integer-like key marked, or undefined when it has none (or has the
 * mark). Only valid JSON: there every quote the scan meets opens a string that closes, so one
 * pass does it.
 */
function markIndexKeys(text: string): string | undefined {
  if (!INDEX_KEY_TEXT.test(text) || text.includes('\\u0000')) return undefined;
  return text.replace(STRING_TEXT, (string: string, colon: string | undefined) =>
    colon !== undefined && isIndexKey(string.slice(1, string.length - 1 - colon.length))
      ? `"\\u0000${string.slice(1)}`
      : string,
  );
}

/**
 * A parsed object with marked keys as the client ordered them: an `OrderedObject` when
 * JavaScript's order differs, else a plain object (as is one with a key written twice).
 */
function unmark(object: Record<string, unknown>): unknown {
  const keys = Object.keys(object);
  if (!keys.some((key) => key.startsWith(MARK))) return object;
  const entries = keys.map(
    (key) => [key.startsWith(MARK) ? key.slice(1) : key, object[key]] as const,
  );
  const plain = Object.fromEntries(entries) as Record<string, unknown>;
  const order = Object.keys(plain);
  if (order.length !== entries.length || order.every((key, i) => key === entries[i]![0])) {
    return plain;
  }
  return new OrderedObject(entries);
}

/** Parses `text`, numbers with their source text and, when `ordered`, marked keys unmarked. */
function parse(text: string, ordered: boolean): { value: unknown; changed: boolean } {
  let changed = false;
  const reviver: SourceReviver = (_key, value, context) => {
    if (typeof value === 'number') {
      const source = context?.source;
      if (source === undefined || source === JSON.stringify(value)) return value;
      changed = true;
      return new NumberText(source);
    }
    if (!ordered || typeof value !== 'object' || value === null || Array.isArray(value)) {
      return value;
    }
    const kept = unmark(value as Record<string, unknown>);
    if (kept instanceof OrderedObject) changed = true;
    return kept;
  };
  const value: unknown = JSON.parse(text, reviver);
  return { value, changed };
}

/**
 * JSON text parsed as its writer wrote it: with `NumberText` for each number written otherwise
 * than `JSON.stringify` would, and `OrderedObject` for each object whose key order a JavaScript
 * object would change; `changed` when there is either. Only text with an integer-like key is
 * parsed a second time, with those keys marked. Throws on invalid JSON.
 */
export function parseAsWritten(text: string): { value: unknown; changed: boolean } {
  const plain = parse(text, false);
  const marked = markIndexKeys(text);
  return marked === undefined ? plain : parse(marked, true);
}

/**
 * `body` as its client wrote it (`parseAsWritten`); `body` itself when nothing differs from
 * what JavaScript would write, or when `text` is not what `body` was parsed from (a preset
 * changed it since).
 */
function asWritten(body: Record<string, unknown>, text: string): unknown {
  try {
    const written = parseAsWritten(text);
    if (!written.changed || JSON.stringify(JSON.parse(text)) !== JSON.stringify(body)) return body;
    return written.value;
  } catch {
    return body;
  }
}

/**
 * How `body` was written, from the client's bytes: `raw`, the whole body, or only `rawHead`, its
 * first bytes (spacing alone). With neither, as `JSON.stringify` writes.
 */
export function clientWriting(
  body: Record<string, unknown>,
  raw: Uint8Array | undefined,
  rawHead: Uint8Array | undefined,
): ClientWriting {
  if (raw === undefined) {
    const head = rawHead ? Buffer.from(rawHead).toString('latin1') : '';
    return { body, spaced: SPACED.test(head) };
  }
  const text = Buffer.from(raw).toString('utf8');
  const escaping = escapingOf(text);
  return {
    body: asWritten(body, text),
    spaced: SPACED.test(rawHead ? Buffer.from(rawHead).toString('latin1') : text.slice(0, 64)),
    ...(escaping ? { escaping } : {}),
  };
}
