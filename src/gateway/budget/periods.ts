/** Budget periods in UTC: day, week from Monday 00:00, calendar month, and all time. */
import type { Period } from '../store/types.js';

const DAY_MS = 86_400_000;

/** Start (unix ms) of the period containing `now`; 0 for `total`. */
export function periodStart(period: Period, now: number): number {
  const date = new Date(now);
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  switch (period) {
    case 'daily':
      return midnight;
    case 'weekly': {
      const sinceMonday = (date.getUTCDay() + 6) % 7;
      return midnight - sinceMonday * DAY_MS;
    }
    case 'monthly':
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    case 'total':
      return 0;
  }
}

/** When the period containing `now` ends (unix ms); null for `total`, which never resets. */
export function periodResetsAt(period: Period, now: number): number | null {
  const date = new Date(now);
  switch (period) {
    case 'daily':
      return periodStart('daily', now) + DAY_MS;
    case 'weekly':
      return periodStart('weekly', now) + 7 * DAY_MS;
    case 'monthly':
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    case 'total':
      return null;
  }
}
