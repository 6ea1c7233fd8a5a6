/** Slows down repeated failed authentications from one client address (429 + Retry-After). */

const WINDOW_MS = 60_000;

export class AuthThrottle {
  private readonly failures = new Map<string, { count: number; windowStart: number }>();
  private readonly limit: number;
  private readonly now: () => number;

  constructor(limitPerMinute: number, now: () => number) {
    this.limit = limitPerMinute;
    this.now = now;
  }

  /** Seconds the address must wait, or 0 when it may try. */
  retryAfterSeconds(address: string): number {
    const entry = this.failures.get(address);
    if (!entry) return 0;
    const elapsed = this.now() - entry.windowStart;
    if (elapsed >= WINDOW_MS) {
      this.failures.delete(address);
      return 0;
    }
    return entry.count >= this.limit ? Math.ceil((WINDOW_MS - elapsed) / 1000) : 0;
  }

  recordFailure(address: string): void {
    const now = this.now();
    const entry = this.failures.get(address);
    if (!entry || now - entry.windowStart >= WINDOW_MS) {
      this.failures.set(address, { count: 1, windowStart: now });
    } else entry.count++;
    if (this.failures.size > 100_000) this.failures.clear();
  }
}
