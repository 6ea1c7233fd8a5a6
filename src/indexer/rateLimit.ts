/**
 * Per-address request budget in fixed one-second windows. Memory is bounded: the table is
 * dropped whenever it holds more than `maxAddresses` (a flood of fresh addresses then only
 * resets everyone's count, never grows the process).
 */
export interface RateLimiter {
  /** True when `address` may make another request now. */
  allow(address: string): boolean;
}

/** A limiter admitting `perSecond` requests per address per second (0 = unlimited). */
export function createRateLimiter(
  perSecond: number,
  now: () => number = Date.now,
  maxAddresses = 100_000,
): RateLimiter {
  if (perSecond <= 0) return { allow: () => true };
  let window = Math.floor(now() / 1000);
  let counts = new Map<string, number>();
  return {
    allow(address) {
      const current = Math.floor(now() / 1000);
      if (current !== window || counts.size > maxAddresses) {
        window = current;
        counts = new Map();
      }
      const used = (counts.get(address) ?? 0) + 1;
      counts.set(address, used);
      return used <= perSecond;
    },
  };
}
