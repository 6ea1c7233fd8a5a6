/** Reads budget counters in tests. */
import type { BudgetLevel, PeriodSpend } from '../store/types.js';
import type { Harness } from './harness.js';

/** Settled spend of a scope at the harness clock. */
export function periodSpendOf(
  h: Harness,
  level: BudgetLevel,
  scopeId: string,
): Promise<PeriodSpend> {
  return h.store.periodSpend(level, scopeId, h.clock.now);
}
