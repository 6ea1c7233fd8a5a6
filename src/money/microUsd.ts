/**
 * Money is integer micro-USD (`bigint`, 6 decimals = USDC base units). No floating point
 * ever touches an amount: strings are parsed digit by digit and formatted the same way.
 */

/** An amount in micro-USD (1 USD = 1_000_000n). */
export type MicroUsd = bigint;

export const MICRO_PER_USD = 1_000_000n;
const DECIMALS = 6;
const USD_PATTERN = /^(-)?(\d+)(?:\.(\d+))?$/;

/** Thrown when a string or number is not a valid USD amount. */
export class MoneyFormatError extends Error {
  override name = 'MoneyFormatError';
}

export interface ParseUsdOptions {
  /** Allow a leading minus sign (default false: amounts from users are never negative). */
  allowNegative?: boolean;
}

/**
 * Parses a decimal USD string ("2", "2.5", "2.104512") into micro-USD, exactly.
 * More than 6 fractional digits is an error, never a silent rounding.
 */
export function parseUsd(text: string, options: ParseUsdOptions = {}): MicroUsd {
  const trimmed = text.trim();
  const match = USD_PATTERN.exec(trimmed);
  if (!match)
    throw new MoneyFormatError(`"${text}" is not a USD amount (expected digits like 2 or 2.50)`);
  const [, minus, whole, fraction = ''] = match;
  if (fraction.length > DECIMALS) {
    throw new MoneyFormatError(`"${text}" has more than ${DECIMALS} decimal places`);
  }
  if (minus && !options.allowNegative) throw new MoneyFormatError(`"${text}" is negative`);
  const micro = BigInt(whole!) * MICRO_PER_USD + BigInt(fraction.padEnd(DECIMALS, '0'));
  return minus ? -micro : micro;
}

/** Formats micro-USD as a string with exactly 6 fractional digits ("2.104512", "-0.000001"). */
export function formatUsd(micro: MicroUsd): string {
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const whole = abs / MICRO_PER_USD;
  const fraction = (abs % MICRO_PER_USD).toString().padStart(DECIMALS, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

/**
 * Converts a JSON number of USD (as found in peer metadata) into micro-USD without float
 * arithmetic: the number's shortest decimal representation is parsed as a string.
 */
export function usdNumberToMicro(value: number, options: ParseUsdOptions = {}): MicroUsd {
  if (!Number.isFinite(value)) throw new MoneyFormatError(`${value} is not a finite amount`);
  return parseUsd(expandExponent(String(value)), options);
}

/** Renders micro-USD as a JSON number of USD for wire formats that carry numbers (metadata). */
export function microToUsdNumber(micro: MicroUsd): number {
  return Number(formatUsd(micro));
}

/** Turns "1e-7" / "1.5e+21" into plain decimal notation so it can be parsed exactly. */
function expandExponent(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/i.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exponentText] = match;
  const exponent = Number(exponentText);
  const digits = whole! + fraction;
  const pointAt = whole!.length + exponent;
  if (pointAt <= 0) return `${sign}0.${'0'.repeat(-pointAt)}${digits}`;
  if (pointAt >= digits.length) return `${sign}${digits}${'0'.repeat(pointAt - digits.length)}`;
  return `${sign}${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
}

/** Sum of amounts. */
export function sumMicro(amounts: Iterable<MicroUsd>): MicroUsd {
  let total = 0n;
  for (const amount of amounts) total += amount;
  return total;
}

/** Integer division rounding up, for non-negative operands. */
export function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator <= 0n) return numerator / denominator;
  return (numerator + denominator - 1n) / denominator;
}
