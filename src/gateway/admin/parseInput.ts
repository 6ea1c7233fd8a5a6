/** Parsing of admin input (CLI flags): USD limits, dates, model lists — with one-line errors. */
import { SvcError } from '../../errors/index.js';
import { type MicroUsd, MoneyFormatError, parseUsd } from '../../money/index.js';

function invalid(message: string): SvcError {
  return new SvcError('invalid_argument', { message });
}

/** A limit in USD ("5", "2.50"); "none" removes it. Negative or non-numeric values are refused. */
export function parseLimitUsd(flag: string, text: string): MicroUsd | null {
  if (text.trim().toLowerCase() === 'none') return null;
  try {
    return parseUsd(text);
  } catch (error) {
    const reason = error instanceof MoneyFormatError ? error.message : String(error);
    throw invalid(`${flag}: ${reason}; give a non-negative USD amount like 5 or 2.50, or "none"`);
  }
}

/** An expiry date: ISO date or date-time; must be in the future. */
export function parseExpiry(text: string, now: number): number {
  const at = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00.000Z` : text);
  if (Number.isNaN(at))
    throw invalid(`--expires: "${text}" is not a date (use YYYY-MM-DD or an ISO time)`);
  if (at <= now) throw invalid(`--expires: ${new Date(at).toISOString()} is in the past`);
  return at;
}

/** `--expires-in-days <n>`: a positive whole number of days. */
export function parseExpiresInDays(text: string, now: number): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw invalid(`--expires-in-days: "${text}" is not a positive whole number of days`);
  }
  return now + Number(text) * 86_400_000;
}

/** A comma-separated list of model names. */
export function parseModelList(text: string): string[] {
  const models = text
    .split(',')
    .map((model) => model.trim())
    .filter(Boolean);
  if (models.length === 0) throw invalid('--models: give at least one model name');
  return models;
}

/** A non-negative integer (key quota). */
export function parseCount(flag: string, text: string): number | null {
  if (text.trim().toLowerCase() === 'none') return null;
  if (!/^\d+$/.test(text)) throw invalid(`${flag}: "${text}" is not a whole number (or "none")`);
  return Number(text);
}
