/**
 * The buyer's own count of a request's input tokens (o200k_base over the request's texts, with a
 * small per-message overhead): the payment bound it pays at most, and what a gateway reserves
 * for, so both count alike (docs/decisions/169-reservations-priced-at-the-route.md).
 */
import { countTextTokens, countTextTokensAsync } from './tokens.js';

const TEXT_KEYS = new Set([
  'content',
  'text',
  'input',
  'instructions',
  'system',
  'arguments',
  'delta',
  'output_text',
  'thinking',
]);

/** Concatenates the human-readable strings of a request or response body. */
export function textOf(value: unknown, key?: string): string {
  if (typeof value === 'string') return key === undefined || TEXT_KEYS.has(key) ? value : '';
  if (Array.isArray(value)) return value.map((item) => textOf(item, key)).join('\n');
  if (value && typeof value === 'object') {
    const parts: string[] = [];
    for (const [name, inner] of Object.entries(value)) {
      if (name === 'input' && typeof inner === 'object') parts.push(JSON.stringify(inner));
      else parts.push(textOf(inner, TEXT_KEYS.has(name) ? undefined : name));
    }
    return parts.filter(Boolean).join('\n');
  }
  return '';
}

function requestTexts(body: Record<string, unknown>): string[] {
  const texts = [
    textOf({ system: body.system, instructions: body.instructions }),
    textOf(body.messages ?? body.input ?? ''),
  ];
  if (Array.isArray(body.tools) && body.tools.length > 0) texts.push(JSON.stringify(body.tools));
  return texts;
}

function turnOverhead(body: Record<string, unknown>): number {
  return (Array.isArray(body.messages) ? body.messages.length : 1) * 3;
}

/** Input tokens of a request body (messages, system, tools), with a small per-message overhead. */
export function countRequestTokens(body: Record<string, unknown>): number {
  return requestTexts(body).reduce((sum, text) => sum + countTextTokens(text), turnOverhead(body));
}

/** `countRequestTokens` that yields to the event loop while it counts (the request path's form). */
export async function countRequestTokensAsync(body: Record<string, unknown>): Promise<number> {
  let total = turnOverhead(body);
  for (const text of requestTexts(body)) total += await countTextTokensAsync(text);
  return total;
}

/**
 * An upper bound of `countRequestTokens` without counting: o200k_base is byte-level BPE, so a
 * text has at most as many tokens as its UTF-8 bytes.
 */
export function requestTokensBound(body: Record<string, unknown>): number {
  return requestTexts(body).reduce(
    (sum, text) => sum + Buffer.byteLength(text, 'utf8'),
    turnOverhead(body),
  );
}
