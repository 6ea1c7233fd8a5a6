/**
 * The counter rows a reservation was added to, as stored in `reservations.entries`: its scopes
 * and the start of each period, `{"scopes":[[scope, id], …],"starts":[daily, weekly, monthly,
 * total]}` (~150 bytes). Rows written before decision 159 hold the full list of entries (~1 KB,
 * a few rows per page): both are read. Smaller rows mean fewer pages written per commit.
 */
import { type BudgetLevel, PERIODS, type Period } from '../types.js';

export interface Entry {
  scope: BudgetLevel;
  scopeId: string;
  period: Period;
  periodStart: number;
}

interface Compact {
  scopes: Array<[BudgetLevel, string]>;
  starts: number[];
}

/** Every (scope, period) entry of `scopes` at `starts` (one per period, in `PERIODS` order). */
export function entriesOf(
  scopes: ReadonlyArray<{ scope: BudgetLevel; scopeId: string }>,
  starts: readonly number[],
): Entry[] {
  return scopes.flatMap(({ scope, scopeId }) =>
    PERIODS.map((period, index) => ({
      scope,
      scopeId,
      period,
      periodStart: starts[index] as number,
    })),
  );
}

export function encodeEntries(
  scopes: ReadonlyArray<{ scope: BudgetLevel; scopeId: string }>,
  starts: readonly number[],
): string {
  const compact: Compact = {
    scopes: scopes.map(({ scope, scopeId }) => [scope, scopeId]),
    starts: [...starts],
  };
  return JSON.stringify(compact);
}

export function decodeEntries(text: string): Entry[] {
  const parsed = JSON.parse(text) as Entry[] | Compact;
  if (Array.isArray(parsed)) return parsed;
  return entriesOf(
    parsed.scopes.map(([scope, scopeId]) => ({ scope, scopeId })),
    parsed.starts,
  );
}
