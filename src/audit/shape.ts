/**
 * The shape of one of the buyer's own requests, with none of its words
 * (docs/decisions/164-audits-a-seller-cannot-tell-from-traffic.md): the JSON structure and key
 * order, every parameter a seller sees, the client's headers in order, and, in place of each
 * piece of text, what kind of text stood there and how long it was. Audits are built from
 * shapes, so an audit carries what the buyer's traffic carries and a user's words go nowhere.
 *
 * What is kept: numbers, booleans, short single-word strings (roles, types, `tool_choice`,
 * `reasoning.effort`, enum values in tool schemas), object keys. What is replaced: every string
 * in a content position (messages, system prompts, instructions, tool results and arguments,
 * descriptions), every longer or spaced string, and identifiers (call ids, user ids, cache keys),
 * whose shape is kept and whose value is only ever shown again to the seller that already saw
 * it. Signed or encrypted reasoning in the history is left out (nobody can forge it). Requests
 * that point at state kept elsewhere (`previous_response_id`, item references) or carry images
 * or files make no shape: they cannot be replayed to other sellers.
 */
import type { ApiFormat } from '../formats/index.js';
import {
  clientWriting,
  type Escaping,
  entriesOf,
  NumberText,
  OrderedObject,
  objectLike,
  parseAsWritten,
  type WrittenObject,
} from './clientJson.js';
import {
  looksLikeCodeMeasured,
  measureText,
  type Segment,
  type Style,
  segmentsOf,
  styleOfMeasures,
} from './textMeasures.js';

/** Where a piece of text stood: the voice the generator writes it in. */
export type Voice = 'system' | 'user' | 'assistant' | 'tool' | 'description' | 'value';

/** A piece of text to write: its voice, whether it was code, its length, lines, stretches, style. */
export class TextSlot {
  readonly voice: Voice;
  readonly code: boolean;
  readonly chars: number;
  readonly lines: number;
  readonly segments: readonly Segment[];
  readonly style?: Style;

  constructor(fields: {
    voice: Voice;
    code: boolean;
    chars: number;
    lines: number;
    segments?: readonly Segment[];
    style?: Style;
  }) {
    this.voice = fields.voice;
    this.code = fields.code;
    this.chars = fields.chars;
    this.lines = fields.lines;
    this.segments = fields.segments ?? [];
    if (fields.style !== undefined) this.style = fields.style;
  }
}

/** An identifier: kept prefix, then `length` characters of `alphabet`; `original` for its seller. */
export class IdSlot {
  constructor(
    readonly prefix: string,
    readonly alphabet: string,
    readonly length: number,
    readonly original: string,
  ) {}
}

/** A string holding JSON (function-call arguments): its own skeleton, written back as a string. */
export class JsonSlot {
  constructor(readonly skeleton: Skeleton) {}
}

export type Skeleton =
  | null
  | boolean
  | number
  | NumberText
  | string
  | TextSlot
  | IdSlot
  | JsonSlot
  | Skeleton[]
  | OrderedObject<Skeleton>
  | { [key: string]: Skeleton };

/** One request's shape. */
export interface RequestShape {
  format: ApiFormat;
  path: string;
  /** Client headers as the seller sees them, in order (lower-case names). */
  headers: [string, string][];
  body: Skeleton;
  /** JSON written with `", "` / `": "` separators (Python clients) instead of none. */
  spaced: boolean;
  /** How the client escapes strings and ends its body, where its bytes show it (Go, PHP). */
  escaping?: Escaping;
  /** The buyer identity that paid for it (audits of it pay the same way). */
  identity: string;
  /** The gateway's cost cap header, when it sent one (the audit carries the same cap). */
  maxCostUsd?: string;
  /** The seller that served the request: the only one shown its original identifiers. */
  servedBy?: string;
  /** The gap between the request and the one before it (ms): copies wait as long. */
  gapMs?: number;
  /**
   * How long before it reached the buyer its request id was made (ms), when not by the buyer
   * (a gateway's): each copy gets an id as old (docs/decisions/223-key-order-and-id-time.md).
   */
  idAgeMs?: number;
  /** Characters of text in all slots (for cost estimates). */
  textChars: number;
}

/** Deepest JSON a shape is taken from, and most nodes visited. */
const MAX_DEPTH = 24;
const MAX_NODES = 20_000;
/** Longest kept string (anything longer is text). */
const MAX_KEPT_CHARS = 40;

/** Keys whose string values are always text, whatever their length. */
const TEXT_KEYS = new Set([
  'content',
  'text',
  'input',
  'system',
  'instructions',
  'output',
  'thinking',
  'refusal',
  'prompt',
  'summary',
  'title',
  'examples',
  'default',
  'const',
  'pattern',
  'stop',
  'stop_sequences',
]);
/** Keys whose values are identifiers whatever they look like. */
const ID_KEYS = new Set(['user', 'safety_identifier', 'prompt_cache_key', 'metadata', 'signature']);
/** Block types whose `input` object is a tool call's arguments: all its strings are user data. */
const CALL_TYPES = new Set(['tool_use', 'server_tool_use']);
/** Items and blocks left out of a shape: signed or encrypted reasoning nobody else can forge. */
const DROPPED_TYPES = new Set(['thinking', 'redacted_thinking', 'reasoning']);
/** Keys that make a request unfit for replay to other sellers. */
const STATEFUL_KEYS = new Set(['previous_response_id', 'conversation']);
/** Content-part types that cannot be written anew (images, files, audio, references). */
const UNREPLAYABLE_TYPES = new Set([
  'image',
  'image_url',
  'input_image',
  'document',
  'file',
  'input_file',
  'input_audio',
  'item_reference',
  'container_upload',
]);

const ROLE_VOICES: Record<string, Voice> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
  tool: 'tool',
  function: 'tool',
};

/** Types whose text is a tool's result or a tool call's, whatever role carries them. */
const TOOL_TYPES = new Set(['tool_result', 'function_call_output', 'custom_tool_call_output']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Thrown when a request cannot become a shape. */
class Unshapeable extends Error {}

/** True for a string that names one thing: an id, a hash, a UUID, a key. */
function isIdentifier(value: string): boolean {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return true;
  const rest = value.replace(/^[a-z]+[_-]/i, '');
  if (rest.length < 12 || /\s/.test(rest)) return false;
  const digits = rest.replace(/[^0-9]/g, '').length;
  const letters = rest.replace(/[^a-z]/gi, '').length;
  return digits >= 3 && letters >= 3;
}

function idSlot(value: string): IdSlot {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
  if (uuid) return new IdSlot('', 'uuid', value.length, value);
  const prefix = /^[a-z]+[_-]/i.exec(value)?.[0] ?? '';
  const rest = value.slice(prefix.length);
  const alphabet = /^[0-9a-f]+$/.test(rest)
    ? 'hex'
    : /^[0-9A-F]+$/.test(rest)
      ? 'HEX'
      : /^[A-Za-z0-9]+$/.test(rest)
        ? 'base62'
        : 'base64url';
  return new IdSlot(prefix, alphabet, rest.length, value);
}

interface Walk {
  nodes: number;
  textChars: number;
}

function textSlot(value: string, voice: Voice, walk: Walk): TextSlot {
  walk.textChars += value.length;
  const measures = measureText(value);
  return new TextSlot({
    voice,
    code: looksLikeCodeMeasured(value, measures),
    chars: value.length,
    lines: measures.lines,
    segments: voice === 'value' || voice === 'description' ? [] : segmentsOf(value, measures),
    ...(value.length >= 24 ? { style: styleOfMeasures(measures, value.length) } : {}),
  });
}

function voiceOf(object: Record<string, unknown>, inherited: Voice): Voice {
  if (typeof object.type === 'string' && TOOL_TYPES.has(object.type)) return 'tool';
  if (typeof object.role === 'string') return ROLE_VOICES[object.role] ?? inherited;
  return inherited;
}

/**
 * Where a value sits: its key, the voice it speaks in, whether it is inside a data value (tool
 * arguments: written back as values, never as prose), and its depth.
 */
interface Place {
  key: string;
  voice: Voice;
  data: boolean;
  depth: number;
}

function shapeString(value: string, { key, voice, data }: Place, walk: Walk) {
  if (key === 'arguments') {
    try {
      // As the arguments were written: their numbers' text, their keys' order.
      const parsed = parseAsWritten(value).value;
      if (typeof parsed === 'object' && parsed !== null && !(parsed instanceof NumberText)) {
        return new JsonSlot(
          shapeValue(parsed, { key: 'arguments', voice: 'value', data: true, depth: 1 }, walk),
        );
      }
    } catch {
      // Not JSON: written as text below.
    }
  }
  if (data || TEXT_KEYS.has(key)) return textSlot(value, data ? 'value' : voice, walk);
  if (key === 'description') return textSlot(value, 'description', walk);
  if (key === 'model' || key === 'type' || key === 'role') return value;
  if (isIdentifier(value)) return idSlot(value);
  if (value.length > MAX_KEPT_CHARS || /\s/.test(value)) return textSlot(value, voice, walk);
  return value;
}

function shapeValue(value: unknown, place: Place, walk: Walk): Skeleton {
  const { key, voice, data, depth } = place;
  if (++walk.nodes > MAX_NODES || depth > MAX_DEPTH) throw new Unshapeable('too large');
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return value;
  if (value instanceof NumberText) return value;
  if (typeof value === 'string') {
    if (ID_KEYS.has(key) && !data) return idSlot(value);
    return shapeString(value, place, walk);
  }
  if (Array.isArray(value)) {
    const kept = value.filter(
      (item) => !(isObject(item) && typeof item.type === 'string' && DROPPED_TYPES.has(item.type)),
    );
    return kept.map((item) => shapeValue(item, { ...place, depth: depth + 1 }, walk));
  }
  if (typeof value !== 'object') throw new Unshapeable('not JSON');
  // An object with integer-like keys the client ordered otherwise than JavaScript keeps its order.
  const written = value as WrittenObject<unknown>;
  const entries = entriesOf(written);
  const object =
    written instanceof OrderedObject
      ? (Object.fromEntries(entries) as Record<string, unknown>)
      : (written as Record<string, unknown>);
  if (typeof object.type === 'string' && UNREPLAYABLE_TYPES.has(object.type)) {
    throw new Unshapeable(`carries ${object.type}`);
  }
  const own = voiceOf(object, voice);
  const call = typeof object.type === 'string' && CALL_TYPES.has(object.type);
  const out: [string, Skeleton][] = [];
  for (const [field, child] of entries) {
    if (child === undefined) continue;
    if (STATEFUL_KEYS.has(field) && child !== null) throw new Unshapeable(`uses ${field}`);
    if (ID_KEYS.has(field) && isObject(child) && !data) {
      out.push([field, shapeIds(child, walk, depth + 1)]);
      continue;
    }
    const childVoice = field === 'system' || field === 'instructions' ? 'system' : own;
    const childData = data || (call && field === 'input' && isObject(child));
    const at = { key: field, voice: childVoice, data: childData, depth: depth + 1 };
    out.push([field, shapeValue(child, at, walk)]);
  }
  return objectLike(written, out);
}

/** Every string leaf under an identifier key (e.g. `metadata`) becomes an identifier slot. */
function shapeIds(value: unknown, walk: Walk, depth: number): Skeleton {
  if (++walk.nodes > MAX_NODES || depth > MAX_DEPTH) throw new Unshapeable('too large');
  if (typeof value === 'string') return idSlot(value);
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return value;
  if (value instanceof NumberText) return value;
  if (Array.isArray(value)) return value.map((item) => shapeIds(item, walk, depth + 1));
  const written = value as WrittenObject<unknown>;
  const out: [string, Skeleton][] = [];
  for (const [field, child] of entriesOf(written)) {
    if (child !== undefined) out.push([field, shapeIds(child, walk, depth + 1)]);
  }
  return objectLike(written, out);
}

export interface ShapeInput {
  format: ApiFormat;
  path: string;
  body: Record<string, unknown>;
  /** The first bytes of the body as the client sent it (for its JSON spacing). */
  rawHead?: Uint8Array;
  /** The body as the client sent it (for its spacing and how it wrote numbers). */
  rawBody?: Uint8Array;
  headers: [string, string][];
  identity: string;
  maxCostUsd?: string;
  /** How long before it reached the buyer its request id was made (a gateway's id). */
  idAgeMs?: number;
}

/** The shape of a request, or undefined when it cannot be replayed (see the file comment). */
export function shapeOf(input: ShapeInput): RequestShape | undefined {
  const walk: Walk = { nodes: 0, textChars: 0 };
  const writing = clientWriting(input.body, input.rawBody, input.rawHead);
  let body: Skeleton;
  try {
    body = shapeValue(writing.body, { key: '', voice: 'user', data: false, depth: 0 }, walk);
  } catch (error) {
    if (error instanceof Unshapeable) return undefined;
    throw error;
  }
  return {
    format: input.format,
    path: input.path,
    headers: input.headers,
    body,
    spaced: writing.spaced,
    ...(writing.escaping ? { escaping: writing.escaping } : {}),
    identity: input.identity,
    ...(input.maxCostUsd !== undefined ? { maxCostUsd: input.maxCostUsd } : {}),
    ...(input.idAgeMs !== undefined ? { idAgeMs: input.idAgeMs } : {}),
    textChars: walk.textChars,
  };
}
