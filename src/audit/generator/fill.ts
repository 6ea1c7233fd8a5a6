/**
 * Turns a request shape into an audit request (docs/decisions/164-...): every text slot written
 * anew by the text generator, in the same place, voice and length; every identifier either its
 * original (for the seller that already saw it) or a fresh one of the same form, the same fresh
 * value wherever the original repeated (a tool call and its result keep their pairing). The
 * body is written with the client's own JSON spacing.
 */
import { randomUUID } from 'node:crypto';
import {
  type Escaping,
  mapObject,
  NumberText,
  OrderedObject,
  type WrittenObject,
} from '../clientJson.js';
import { IdSlot, JsonSlot, type RequestShape, type Skeleton, TextSlot } from '../shape.js';
import { newTheme, type Random } from './draw.js';
import { writeSlot } from './text.js';

/** Arguments written as JSON, still to be turned into their string. */
class JsonText {
  constructor(readonly value: Written) {}
}

/** The body of a probe with texts written and identifiers still open. */
type Written =
  | null
  | boolean
  | number
  | NumberText
  | string
  | IdSlot
  | JsonText
  | Written[]
  | OrderedObject<Written>
  | { [key: string]: Written };

const ALPHABETS: Record<string, string> = {
  hex: '0123456789abcdef',
  HEX: '0123456789ABCDEF',
  base62: '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
  base64url: '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_',
};

function write(skeleton: Skeleton, theme: ReturnType<typeof newTheme>, random: Random): Written {
  if (skeleton instanceof NumberText) return skeleton;
  if (skeleton instanceof TextSlot) return writeSlot(skeleton, theme, random);
  if (skeleton instanceof IdSlot) return skeleton;
  if (skeleton instanceof JsonSlot) return new JsonText(write(skeleton.skeleton, theme, random));
  if (Array.isArray(skeleton)) return skeleton.map((item) => write(item, theme, random));
  if (skeleton !== null && typeof skeleton === 'object') {
    return mapObject(skeleton as WrittenObject<Skeleton>, (value) => write(value, theme, random));
  }
  return skeleton;
}

/** A probe's text, written once and shared by every seller that receives it. */
export interface WrittenProbe {
  shape: RequestShape;
  body: Written;
}

/** Writes the texts of a probe from `shape`. */
export function writeProbe(shape: RequestShape, random: Random): WrittenProbe {
  return { shape, body: write(shape.body, newTheme(random), random) };
}

function freshId(slot: IdSlot, random: Random): string {
  if (slot.alphabet === 'uuid') return randomUUID();
  const alphabet = ALPHABETS[slot.alphabet] ?? ALPHABETS.base62!;
  let out = slot.prefix;
  for (let i = 0; i < slot.length; i++) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

function close(value: Written, ids: (slot: IdSlot) => string): unknown {
  if (value instanceof NumberText) return value;
  if (value instanceof IdSlot) return ids(value);
  if (value instanceof JsonText) return jsonText(close(value.value, ids), false);
  if (Array.isArray(value)) return value.map((item) => close(item, ids));
  if (value !== null && typeof value === 'object') {
    return mapObject(value as WrittenObject<Written>, (item) => close(item, ids));
  }
  return value;
}

const ascii = (text: string) =>
  JSON.stringify(text).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** Go's escapes of `<`, `>`, `&`, U+2028 and U+2029, and PHP's of `/`, in encoded JSON text. */
const HTML_CHARS = /[<>&\u2028\u2029]/g;
const goEscape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * JSON as `JSON.stringify` writes it or, `spaced`, as Python's `json.dumps` does by default
 * (spaced separators, ASCII only), with the client's own escapes and final line feed where its
 * bytes showed them (`Escaping`); numbers the client wrote otherwise keep its text, objects
 * whose keys it ordered otherwise than JavaScript its order.
 */
function jsonText(value: unknown, spaced: boolean, escaping?: Escaping): string {
  const [comma, colon] = spaced ? [', ', ': '] : [',', ':'];
  const plain = spaced ? ascii : (text: string) => JSON.stringify(text);
  // In `JSON.stringify`'s output these characters stand only for themselves: replacing them
  // changes no other escape.
  const string = (text: string) => {
    let encoded = plain(text);
    if (escaping?.html === true) encoded = encoded.replace(HTML_CHARS, goEscape);
    if (escaping?.slash === true) encoded = encoded.replaceAll('/', '\\/');
    return encoded;
  };
  const walk = (item: unknown): string => {
    if (item instanceof NumberText) return item.text;
    if (item === null || typeof item !== 'object') {
      return typeof item === 'string' ? string(item) : JSON.stringify(item);
    }
    if (Array.isArray(item)) return `[${item.map(walk).join(comma)}]`;
    const entries =
      item instanceof OrderedObject
        ? item.entries
        : Object.entries(item as Record<string, unknown>);
    return `{${entries.map(([key, child]) => `${string(key)}${colon}${walk(child)}`).join(comma)}}`;
  };
  const text = walk(value);
  return escaping?.newline === true ? `${text}\n` : text;
}

/**
 * Client headers whose values name one request (trace contexts, request ids, idempotency keys):
 * a probe copying them verbatim would show the seller that served the original a value it had
 * seen before, which no request of the client ever does (docs/decisions/218-probe-tells-closed.md).
 */
const PER_REQUEST_HEADERS = new Set([
  'traceparent',
  'sentry-trace',
  'x-request-id',
  'request-id',
  'x-correlation-id',
  'idempotency-key',
  'x-amzn-trace-id',
  'x-b3-traceid',
  'x-b3-spanid',
  'x-b3-parentspanid',
  'b3',
  'x-datadog-trace-id',
  'x-datadog-parent-id',
  'x-cloud-trace-context',
  'uber-trace-id',
]);

/** A run of 8 or more letters and digits holding a digit, written anew in the same alphabet. */
function freshRun(run: string, random: Random): string {
  const hex = /^[0-9a-f]+$/.test(run)
    ? '0123456789abcdef'
    : /^[0-9A-F]+$/.test(run)
      ? '0123456789ABCDEF'
      : undefined;
  let out = '';
  for (const char of run) {
    const alphabet =
      hex ??
      (/[0-9]/.test(char)
        ? '0123456789'
        : /[a-z]/.test(char)
          ? 'abcdefghijklmnopqrstuvwxyz'
          : 'ABCDEFGHIJKLMNOPQRSTUVWXYZ');
    out += alphabet[Math.floor(random() * alphabet.length)];
  }
  return out;
}

/**
 * The client headers one copy carries: the copied request's, in order, with the ids of
 * per-request headers written anew in their form (separators and short fields such as a trace's
 * version and flags kept), for every seller alike.
 */
export function renderHeaders(
  headers: readonly [string, string][],
  random: Random,
): [string, string][] {
  return headers.map(([name, value]) =>
    PER_REQUEST_HEADERS.has(name)
      ? [
          name,
          value.replace(/[A-Za-z0-9]{8,}/g, (run) =>
            /[0-9]/.test(run) ? freshRun(run, random) : run,
          ),
        ]
      : [name, value],
  );
}

/**
 * The body bytes one seller receives. `original` keeps the identifiers the request it was shaped
 * from carried (only for the seller that served that request); otherwise each identifier gets
 * a fresh value of its form, repeated wherever the original repeated.
 */
export function renderProbe(probe: WrittenProbe, original: boolean, random: Random): Uint8Array {
  const fresh = new Map<string, string>();
  const ids = (slot: IdSlot) => {
    if (original) return slot.original;
    let value = fresh.get(slot.original);
    if (value === undefined) {
      value = freshId(slot, random);
      fresh.set(slot.original, value);
    }
    return value;
  };
  const body = close(probe.body, ids);
  const text = jsonText(body, probe.shape.spaced, probe.shape.escaping);
  return new TextEncoder().encode(text);
}
