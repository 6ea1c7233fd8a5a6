/**
 * The time part of the request and log ids the buyer and the gateway make (decision 163): unix milliseconds as
 * 12 hex digits (48 bits, clamped), so ids made later sort later and the tables keyed by them
 * grow at their ends.
 */
export function timeHex(at: number): string {
  return Math.max(0, Math.min(Math.floor(at), 0xffff_ffff_ffff))
    .toString(16)
    .padStart(12, '0');
}
