/** Console form fields -> admin values, through the same parsers as the CLI flags. */
import { SvcError } from '../../../errors/index.js';
import { parseCount, parseExpiry, parseLimitUsd, parseModelList } from '../../admin/parseInput.js';
import { type Limits, PERIODS } from '../../store/types.js';

function invalid(message: string): SvcError {
  return new SvcError('invalid_argument', { message });
}

/** An optional string field of at most 200 characters. */
export function optionalText(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || value.length > 200) throw invalid(`${name}: give a short text`);
  return value.trim();
}

/** `{daily: "5", weekly: "none", ...}`: only the periods given; "none" or "" removes a limit. */
export function limitsOf(body: Record<string, unknown>): Partial<Limits> {
  const raw = body.limits;
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid('limits: give an object');
  const limits: Partial<Limits> = {};
  for (const period of PERIODS) {
    const value = (raw as Record<string, unknown>)[period];
    if (value === undefined) continue;
    if (value === null || value === '') limits[period] = null;
    else if (typeof value === 'string' && value.length <= 40)
      limits[period] = parseLimitUsd(`${period} limit`, value);
    else throw invalid(`${period} limit: give a USD amount`);
  }
  return limits;
}

/** `expiresAt`: undefined = unchanged, "" or "none" = never, else a future date. */
export function expiryOf(body: Record<string, unknown>, now: number): number | null | undefined {
  const text = optionalText(body, 'expiresAt');
  if (body.expiresAt === undefined) return undefined;
  if (text === undefined || text.toLowerCase() === 'none') return null;
  return parseExpiry(text, now);
}

/** `models`: undefined = unchanged, "" = every model, else a comma-separated list. */
export function modelsOf(body: Record<string, unknown>): string[] | null | undefined {
  if (body.models === undefined) return undefined;
  const text = body.models === null ? undefined : optionalText(body, 'models');
  return text === undefined ? null : parseModelList(text);
}

/** `keyQuota`: undefined = unchanged, "" or "none" = unlimited. */
export function quotaOf(body: Record<string, unknown>): number | null | undefined {
  if (body.keyQuota === undefined) return undefined;
  const text = optionalText(body, 'keyQuota');
  return text === undefined ? null : parseCount('keyQuota', text);
}

/** An optional boolean field. */
export function flagOf(body: Record<string, unknown>, name: string): boolean | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalid(`${name}: give true or false`);
  return value;
}
