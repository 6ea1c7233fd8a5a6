/**
 * How a client wrote its JSON, learned from its bytes, so a probe copied from its request is
 * written the same way (docs/decisions/218-probe-tells-closed.md): its spacing, the numbers it
 * wrote otherwise than `JSON.stringify` would, and the escapes and final line feed of its encoder.
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
  /** The parsed body, with `NumberText` where the client wrote a number its own way. */
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

/**
 * `body` with each number the client wrote otherwise than `JSON.stringify` would as a
 * `NumberText`; `body` itself when there is none, or when `text` is not what `body` was parsed
 * from (a preset changed it since).
 */
function withNumberTexts(body: Record<string, unknown>, text: string): unknown {
  let differs = false;
  const reviver: SourceReviver = (_key, value, context) => {
    const source = context?.source;
    if (typeof value !== 'number' || source === undefined || source === JSON.stringify(value)) {
      return value;
    }
    differs = true;
    return new NumberText(source);
  };
  try {
    const written: unknown = JSON.parse(text, reviver);
    if (!differs || JSON.stringify(JSON.parse(text)) !== JSON.stringify(body)) return body;
    return written;
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
    body: withNumberTexts(body, text),
    spaced: SPACED.test(rawHead ? Buffer.from(rawHead).toString('latin1') : text.slice(0, 64)),
    ...(escaping ? { escaping } : {}),
  };
}
