/**
 * Local token estimates (o200k_base through src/formats' tokenizer, so one encoder is loaded):
 * the payment bound of a request and the estimate when a seller reports no usage.
 */
import { countTextTokens } from '../formats/index.js';

export { countTextTokens };

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

/** Input tokens of a request body (messages, system, tools), with a small per-message overhead. */
export function countRequestTokens(body: Record<string, unknown>): number {
  const turns = Array.isArray(body.messages) ? body.messages.length : 1;
  let total = countTextTokens(textOf({ system: body.system, instructions: body.instructions }));
  total += countTextTokens(textOf(body.messages ?? body.input ?? ''));
  if (Array.isArray(body.tools) && body.tools.length > 0)
    total += countTextTokens(JSON.stringify(body.tools));
  return total + turns * 3;
}
