/**
 * Large JSON texts without large native buffers (docs/decisions/155-buyer-memory-with-many-peers.md).
 * V8's `JSON.stringify` builds its result in a native buffer that doubles (512 KiB, 1, 2, 4,
 * 8 MiB…) and is freed at the end; glibc serves each by mmap and, on freeing one, raises its mmap
 * threshold to that size, so later blocks up to that size come from the heap and stay resident
 * once freed. A 7 MB `/v1/models` of 1,000 sellers left the buyer 16–24 MiB larger. Stringifying
 * the elements of long arrays one by one and joining them keeps each buffer small; the text is
 * the same. Writing a long text goes through the same kind of trap (node copies a string into one
 * buffer of 3 bytes per character), hence `textSlices`.
 */

/** Arrays from this many elements are stringified element by element. */
const PIECEWISE_FROM = 64;
/** Containers this deep (0 = the value itself) are assembled piece by piece. */
const PIECEWISE_DEPTH = 2;
/** Characters per slice: at most 96 KiB of UTF-8, below glibc's initial 128 KiB mmap threshold. */
export const SLICE_CHARS = 32 * 1024;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && !('toJSON' in value);
}

function holdsLongArray(value: unknown, depth: number): boolean {
  if (depth >= PIECEWISE_DEPTH) return false;
  if (Array.isArray(value)) return value.length >= PIECEWISE_FROM;
  if (!isPlainObject(value)) return false;
  for (const key in value) if (holdsLongArray(value[key], depth + 1)) return true;
  return false;
}

/** `JSON.stringify(value, null, indent)` of a value nested at `pad`, or undefined when omitted. */
function piece(value: unknown, indent: number, depth: number, pad: string): string | undefined {
  if (!holdsLongArray(value, depth)) {
    const text = JSON.stringify(value, null, indent);
    return text !== undefined && indent > 0 && pad !== ''
      ? text.replaceAll('\n', `\n${pad}`)
      : text;
  }
  const inner = pad + ' '.repeat(indent);
  const open = indent > 0 ? `\n${inner}` : '';
  const separator = indent > 0 ? `,\n${inner}` : ',';
  const close = indent > 0 ? `\n${pad}` : '';
  if (Array.isArray(value)) {
    const parts = Array.from(value, (item) => piece(item, indent, depth + 1, inner) ?? 'null');
    return `[${open}${parts.join(separator)}${close}]`;
  }
  const parts: string[] = [];
  const colon = indent > 0 ? ': ' : ':';
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const text = piece(item, indent, depth + 1, inner);
    if (text !== undefined) parts.push(`${JSON.stringify(key)}${colon}${text}`);
  }
  return parts.length === 0 ? '{}' : `{${open}${parts.join(separator)}${close}}`;
}

/** The same text as `JSON.stringify(value, null, indent)` for JSON data, long arrays piecewise. */
export function jsonText(value: unknown, indent = 0): string {
  return piece(value, indent, 0, '') as string;
}

/** A text cut into slices of at most SLICE_CHARS, never between the halves of a surrogate pair. */
export function* textSlices(text: string): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + SLICE_CHARS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield text.slice(start, end);
    start = end;
  }
}
