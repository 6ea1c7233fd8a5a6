/** Effective limits: a key's own limits are the lower of those set by admins and by its owner. */
import type { MicroUsd } from '../../money/index.js';
import type { Limits } from '../store/types.js';

/** The lower of two limits (null = none). */
export function lowerLimit(a: MicroUsd | null, b: MicroUsd | null): MicroUsd | null {
  if (a === null) return b;
  if (b === null) return a;
  return a < b ? a : b;
}

/** The key's own effective limits: the lower of admin- and owner-set. */
export function effectiveKeyLimits(admin: Limits, owner: Limits): Limits {
  return {
    daily: lowerLimit(admin.daily, owner.daily),
    weekly: lowerLimit(admin.weekly, owner.weekly),
    monthly: lowerLimit(admin.monthly, owner.monthly),
    total: lowerLimit(admin.total, owner.total),
  };
}
