/**
 * How `reserve` (budgets.ts) reads and checks the counter rows of one request: the room left on
 * every limited counter, and on SQLite the one-statement reservation (decision 156).
 */
import type { MicroUsd } from '../../../money/index.js';
import { periodResetsAt } from '../../budget/periods.js';
import {
  type BudgetLevel,
  type BudgetRefusal,
  type Limits,
  PERIODS,
  type ReserveInput,
} from '../types.js';
import { statementText } from './counterTargets.js';
import { bigintOf, type SqlDb, type SqlExecutor, type SqlParam, type SqlRow } from './SqlDb.js';

/** One budget scope of a key with its limits. */
export type Scope = { scope: BudgetLevel; scopeId: string; limits: Limits };

const rowKey = (scope: unknown, scopeId: unknown, period: unknown, start: unknown) =>
  `${String(scope)}|${String(scopeId)}|${String(period)}|${String(start)}`;

/**
 * Every counter row of `values`, created when missing and locked. PostgreSQL: one upsert, whose
 * `ON CONFLICT DO UPDATE` takes the row locks. SQLite already holds the database write lock
 * (`BEGIN IMMEDIATE`), so existing rows are only read — the usual case — which writes nothing;
 * the upsert runs only when a row is missing (a new period or scope).
 */
export async function lockCounters(
  db: SqlDb,
  tx: SqlExecutor,
  values: { sql: string; params: SqlParam[] },
): Promise<SqlRow[]> {
  const count = values.params.length / 4;
  if (db.dialect === 'sqlite') {
    const rows = await tx.query(
      `SELECT scope, scope_id, period, period_start, spent, reserved FROM budget_usage
       WHERE (scope, scope_id, period, period_start) IN (VALUES ${values.sql})`,
      values.params,
    );
    if (rows.length === count) return rows;
  }
  return tx.query(
    `INSERT INTO budget_usage (scope, scope_id, period, period_start) VALUES ${values.sql}
     ON CONFLICT (scope, scope_id, period, period_start) DO UPDATE SET spent = budget_usage.spent
     RETURNING scope, scope_id, period, period_start, spent, reserved`,
    values.params,
  );
}

export const counterMap = (rows: SqlRow[]) =>
  new Map(rows.map((row) => [rowKey(row.scope, row.scope_id, row.period, row.period_start), row]));

export type Checked = { room: MicroUsd | null } | { refusal: BudgetRefusal };

/**
 * The smallest room left on the key's limited counters (null when none is limited), or, when one
 * has less than the minimum, the refusal of the counter with the least room (what a refusal
 * says fits is then what fits everywhere); `added` was already added to each counter's
 * `reserved` and is not counted.
 */
export function roomOf(
  scopes: Scope[],
  starts: number[],
  counters: Map<string, SqlRow>,
  input: ReserveInput,
  added: MicroUsd,
): Checked {
  const minimum = (input.minAmountMicro ?? 1n) + (input.keepRoomMicro ?? 0n);
  let room: MicroUsd | null = null;
  let refused: BudgetRefusal | undefined;
  for (const { scope, scopeId, limits } of scopes) {
    for (const [index, period] of PERIODS.entries()) {
      const limit = limits[period];
      if (limit === null) continue;
      const row = counters.get(rowKey(scope, scopeId, period, starts[index]));
      const spent = bigintOf(row?.spent);
      const committed = spent + bigintOf(row?.reserved) - added;
      const left = limit - committed;
      const short = left < minimum || left <= 0n;
      if (short && (!refused || left < refused.limitMicro - refused.committedMicro)) {
        refused = {
          level: scope,
          period,
          limitMicro: limit,
          spentMicro: spent,
          committedMicro: committed,
          resetsAt: periodResetsAt(period, input.now),
        };
      }
      if (room === null || left < room) room = left;
    }
  }
  return refused ? { refusal: refused } : { room };
}

export const amountOf = (room: MicroUsd | null, input: ReserveInput): MicroUsd =>
  room !== null && room < input.maxAmountMicro ? room : input.maxAmountMicro;

const giveBackReserved = (values: string) => `UPDATE budget_usage SET reserved = reserved - $1
       WHERE (scope, scope_id, period, period_start) IN (VALUES ${values})`;

const addReservedReturning = (values: string) => `UPDATE budget_usage SET reserved = reserved + $1
     WHERE (scope, scope_id, period, period_start) IN (VALUES ${values})
     RETURNING scope, scope_id, period, period_start, spent, reserved`;

/**
 * SQLite, which holds the database write lock: adds the most to every counter and checks the
 * values the update returns, then gives back what is over the room (or everything, refused) —
 * one statement in the usual case instead of a read and an update. Null when a counter row is
 * missing (a new period or scope): nothing is left added, and the caller creates the rows.
 */
export async function reserveAtOnce(
  tx: SqlExecutor,
  scopes: Scope[],
  starts: number[],
  input: ReserveInput,
  targets: { sql: string; params: SqlParam[] },
): Promise<Checked | null> {
  const most = input.maxAmountMicro;
  const giveBack = (amount: MicroUsd) =>
    tx.run(statementText(giveBackReserved, targets.sql), [amount, ...targets.params]);
  const rows = await tx.query(statementText(addReservedReturning, targets.sql), [
    most,
    ...targets.params,
  ]);
  if (rows.length < targets.params.length / 4) {
    if (rows.length > 0) await giveBack(most);
    return null;
  }
  const checked = roomOf(scopes, starts, counterMap(rows), input, most);
  if ('refusal' in checked) await giveBack(most);
  else if (amountOf(checked.room, input) < most)
    await giveBack(most - amountOf(checked.room, input));
  return checked;
}
