/** Column <-> record helpers shared by the entity SQL files. */
import type { RoutingPolicy } from '../../policy/types.js';
import { type Limits, PERIODS, type Period } from '../types.js';
import { bigintOrNull, type SqlParam, type SqlRow } from './SqlDb.js';

/** Reads `<prefix>daily_limit` ... `<prefix>total_limit`. */
export function limitsOf(row: SqlRow, prefix = ''): Limits {
  return {
    daily: bigintOrNull(row[`${prefix}daily_limit`]),
    weekly: bigintOrNull(row[`${prefix}weekly_limit`]),
    monthly: bigintOrNull(row[`${prefix}monthly_limit`]),
    total: bigintOrNull(row[`${prefix}total_limit`]),
  };
}

/** `SET` fragment and params for the periods present in `limits` (undefined = unchanged). */
export function limitAssignments(
  limits: Partial<Limits>,
  prefix: string,
  firstParam: number,
): { sql: string; params: SqlParam[] } {
  const parts: string[] = [];
  const params: SqlParam[] = [];
  for (const period of PERIODS as readonly Period[]) {
    if (!(period in limits) || limits[period] === undefined) continue;
    parts.push(`${prefix}${period}_limit = $${firstParam + params.length}`);
    params.push(limits[period] ?? null);
  }
  return { sql: parts.join(', '), params };
}

export function policyOf(value: unknown): RoutingPolicy | null {
  return typeof value === 'string' && value !== '' ? (JSON.parse(value) as RoutingPolicy) : null;
}

export function policyText(policy: RoutingPolicy | null): string | null {
  return policy ? JSON.stringify(policy) : null;
}

export function boolOf(value: unknown): boolean {
  return value === true || Number(value) === 1;
}

export function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}
