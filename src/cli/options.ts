/** Parsers for numeric flag values; a value that does not parse exits EXIT_USAGE. */
import { usageError } from './errors.js';

/** A TCP port: a whole number 0-65535 (0 picks a free one) unless `min` says otherwise. */
export function parsePort(text: string, flag = '--port', min = 0): number {
  return parseIntOption(text, flag, min, 65_535);
}

/** A whole number within [min, max]. */
export function parseIntOption(
  text: string,
  flag: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw usageError(`${flag}: expected a whole number ${range}, got "${text}"`);
  }
  return value;
}

/** Any finite number, or undefined when the flag was not given; `min` bounds it below. */
export function parseNumberOption(
  text: string | undefined,
  flag: string,
  min = Number.NEGATIVE_INFINITY,
): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min) {
    const bound = min === Number.NEGATIVE_INFINITY ? 'a number' : `a number >= ${min}`;
    throw usageError(`${flag}: expected ${bound}, got "${text}"`);
  }
  return value;
}
