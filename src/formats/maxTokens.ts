/** Reading and capping a request's output-token limit in any format (for the buyer's cost cap). */
import { isRecord } from './check.js';
import type { ApiFormat } from './types.js';

const FIELDS: Record<ApiFormat, readonly string[]> = {
  chat: ['max_completion_tokens', 'max_tokens'],
  responses: ['max_output_tokens'],
  messages: ['max_tokens'],
};

/** The output-token limit a request body sets, or undefined when it sets none. */
export function maxOutputTokensOf(format: ApiFormat, body: unknown): number | undefined {
  if (!isRecord(body)) return undefined;
  let limit: number | undefined;
  for (const field of FIELDS[format]) {
    const value = body[field];
    if (typeof value === 'number' && Number.isFinite(value))
      limit = limit === undefined ? value : Math.min(limit, value);
  }
  return limit;
}

/**
 * A copy of the request body whose output-token limit is at most `cap` (set when absent). Chat
 * keeps whichever of max_completion_tokens / max_tokens the client used (max_completion_tokens
 * when it used neither).
 */
export function capMaxOutputTokens(
  format: ApiFormat,
  body: Record<string, unknown>,
  cap: number,
): Record<string, unknown> {
  const limit = Math.max(1, Math.floor(cap));
  const out = { ...body };
  const fields = FIELDS[format].filter((f) => typeof body[f] === 'number');
  if (fields.length === 0) {
    out[FIELDS[format][0] as string] = limit;
    return out;
  }
  for (const field of fields) out[field] = Math.min(body[field] as number, limit);
  return out;
}
