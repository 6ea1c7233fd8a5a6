/**
 * Model-name normalisation: cosmetic variants of a name share one key,
 * meaningful variants keep distinct keys. The rules are written down in
 * docs/decisions/050-model-name-normalisation.md; the table test beside this file holds them.
 */

/** Vendor prefixes written with a dot (Bedrock style `anthropic.claude-...`). */
const DOTTED_VENDORS = [
  'anthropic',
  'openai',
  'meta',
  'mistral',
  'cohere',
  'amazon',
  'ai21',
  'google',
  'deepseek',
  'qwen',
  'xai',
];

/** OpenRouter-style routing variants after a colon; they name a price tier, not a model. */
const ROUTING_SUFFIX = /:(?:free|nitro|floor|beta|extended|online)$/;
/** Bedrock version suffix such as `-v1:0` / `-v2:0`. */
const BEDROCK_VERSION = /-v\d+:\d+$/;
/** A date: 20250514, 2024-08-06, 2024_08_06 (whole token, anywhere after the first token). */
const DATE_TOKEN =
  /(?:^|[-_.@:\s])20\d{2}[-_.]?(?:0[1-9]|1[0-2])[-_.]?(?:0[1-9]|[12]\d|3[01])(?=$|[-_.:@\s])/g;
/** `-latest` points at the newest dated snapshot of the same model. */
const LATEST = /[-_.:\s]latest$/;

/** The readable, cleaned form: lower case, vendor prefix, date and routing suffixes removed. */
export function cleanModelName(name: string): string {
  let text = name.trim().toLowerCase();
  const slash = text.lastIndexOf('/');
  if (slash >= 0) text = text.slice(slash + 1);
  for (const vendor of DOTTED_VENDORS) {
    if (text.startsWith(`${vendor}.`)) {
      text = text.slice(vendor.length + 1);
      break;
    }
  }
  text = text.replace(ROUTING_SUFFIX, '').replace(BEDROCK_VERSION, '');
  text = text.replace(DATE_TOKEN, '').replace(LATEST, '');
  // Vertex writes the snapshot after '@'.
  text = text.replace(/@.*$/, '');
  return text.replace(/^[-_.:\s]+|[-_.:\s]+$/g, '') || name.trim().toLowerCase();
}

/**
 * Keys already computed: routing normalises the same few names several times per request
 * (a pure function of the name). Bounded: names up to 256 characters, 10,000 of them, forgotten
 * all at once when full.
 */
const normalized = new Map<string, string>();
const NORMALIZED_CAPACITY = 10_000;
const NORMALIZED_MAX_NAME = 256;

/**
 * The catalog key of a model name: the cleaned name split into tokens at separators
 * (`-`, `.`, `_`, `:`, space) and at letter/digit boundaries, joined with `-`.
 * `Claude-3.5-Sonnet`, `claude_3_5_sonnet` and `anthropic/claude-3-5-sonnet-20241022`
 * all become `claude-3-5-sonnet`; `gpt-4` and `gpt-4.1` stay apart (`gpt-4` vs `gpt-4-1`).
 */
export function normalizeModelName(name: string): string {
  let key = normalized.get(name);
  if (key === undefined) {
    key = cleanModelName(name)
      .split(/[-_.:\s]+/)
      .flatMap((token) => token.match(/[a-z]+|\d+|[^a-z\d]+/g) ?? [])
      .filter((token) => token.length > 0)
      .join('-');
    if (name.length > NORMALIZED_MAX_NAME) return key;
    if (normalized.size >= NORMALIZED_CAPACITY) normalized.clear();
    normalized.set(name, key);
  }
  return key;
}

/** Edit distance, for "did you mean" suggestions (small strings only). */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const saved = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = saved;
    }
  }
  return row[b.length]!;
}

/** Up to `limit` known names closest to `wanted` (by normalised key), best first. */
export function closestModelNames(wanted: string, known: Iterable<string>, limit = 3): string[] {
  const key = normalizeModelName(wanted);
  const scored: Array<{ name: string; distance: number }> = [];
  for (const name of known) {
    const other = normalizeModelName(name);
    const distance = other.includes(key) || key.includes(other) ? 1 : editDistance(key, other);
    if (distance <= Math.max(3, Math.floor(key.length / 3))) scored.push({ name, distance });
  }
  scored.sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name));
  return scored.slice(0, limit).map((entry) => entry.name);
}
