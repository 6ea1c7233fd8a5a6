/**
 * Budget counters and reservations. `reserve` locks every counter row the request touches (key,
 * member and workspace × four periods, always in that order), checks each limited one has room,
 * and adds the reservation to all of them — one transaction, so concurrent requests on one or
 * many gateways can never together exceed a limit.
 */
import type { MicroUsd } from '../../../money/index.js';
import { effectiveKeyLimits } from '../../budget/effectiveLimits.js';
import { periodStart } from '../../budget/periods.js';
import {
  type BudgetLevel,
  type KeyUsage,
  PERIODS,
  type PeriodSpend,
  type ReserveInput,
  type ReserveResult,
  type SettleInput,
} from '../types.js';
import type { CallerCache } from './callerCache.js';
import { reservationRows, statementText, storedEntries, tuples } from './counterTargets.js';
import type { Entry } from './reservationEntries.js';
import {
  amountOf,
  counterMap,
  lockCounters,
  reserveAtOnce,
  roomOf,
  type Scope,
} from './reserveCounters.js';
import { limitsOf } from './rows.js';
import { bigintOf, numberOf, type SqlDb, type SqlExecutor, textOf } from './SqlDb.js';

const LIMIT_COLUMNS = (alias: string, prefix = '') =>
  PERIODS.map((p) => `${alias}.${prefix}${p}_limit AS ${alias}_${prefix}${p}_limit`).join(', ');

const SCOPES_SQL = `SELECT k.member_id AS member_id, k.workspace_id AS workspace_id,
       ${LIMIT_COLUMNS('k', 'admin_')}, ${LIMIT_COLUMNS('k', 'owner_')},
       ${LIMIT_COLUMNS('m')}, ${LIMIT_COLUMNS('w')}
     FROM api_keys k LEFT JOIN members m ON m.id = k.member_id
     JOIN workspaces w ON w.id = k.workspace_id WHERE k.id = $1`;

/** The key's three budget scopes with their limits, read in one query inside the transaction. */
async function scopesOf(tx: SqlExecutor, keyId: string): Promise<Scope[] | null> {
  const rows = await tx.query(SCOPES_SQL, [keyId]);
  const row = rows[0];
  if (!row) return null;
  const scopes: Scope[] = [
    {
      scope: 'key',
      scopeId: keyId,
      limits: effectiveKeyLimits(limitsOf(row, 'k_admin_'), limitsOf(row, 'k_owner_')),
    },
  ];
  if (row.member_id) {
    scopes.push({ scope: 'member', scopeId: textOf(row.member_id), limits: limitsOf(row, 'm_') });
  }
  scopes.push({
    scope: 'workspace',
    scopeId: textOf(row.workspace_id),
    limits: limitsOf(row, 'w_'),
  });
  return scopes;
}

const addReserved = (values: string) => `UPDATE budget_usage SET reserved = reserved + $1
       WHERE (scope, scope_id, period, period_start) IN (VALUES ${values})`;

const settleCounters = (
  values: string,
) => `INSERT INTO budget_usage (scope, scope_id, period, period_start) VALUES ${values}
     ON CONFLICT (scope, scope_id, period, period_start) DO UPDATE
     SET reserved = budget_usage.reserved - $1, spent = budget_usage.spent + $2`;

/**
 * Reserves min(maxAmount, smallest room) on every counter of the key, atomically; refuses when
 * the smallest room is below `minAmountMicro` (a request sized to its own maximum cost reserves
 * all of it or nothing, docs/decisions/121-reservations-sized-to-the-request.md). PostgreSQL: one
 * upsert creates missing counter rows and locks all of them (`ON CONFLICT DO UPDATE` takes row
 * locks). SQLite holds the database write lock from `BEGIN IMMEDIATE` and reserves in one update
 * when the rows exist (`reserveAtOnce`).
 */
export async function reserve(db: SqlDb, input: ReserveInput): Promise<ReserveResult> {
  return db.transaction((tx) => reserveIn(db, tx, input));
}

/**
 * `reserve` inside a transaction the caller holds (several share one on SQLite, decision 159),
 * with the key's scopes from `cache` when no row they come from changed.
 */
export async function reserveIn(
  db: SqlDb,
  tx: SqlExecutor,
  input: ReserveInput,
  cache?: CallerCache | null,
): Promise<ReserveResult> {
  // Limits as of this transaction: the cache is checked for changes inside it (decision 159).
  const scopes = cache
    ? await cache.scopesOf(input.keyId, () => scopesOf(tx, input.keyId))
    : await scopesOf(tx, input.keyId);
  if (!scopes) throw new Error(`unknown key ${input.keyId}`);
  const { starts, entries, encoded } = reservationRows(scopes, input.now);
  const targets = tuples(entries, 2);
  // SQLite: add the most at once and check the counters it returns (decision 156), else (a
  // counter row missing, or PostgreSQL) lock the rows first.
  let outcome =
    db.dialect === 'sqlite' ? await reserveAtOnce(tx, scopes, starts, input, targets) : null;
  if (outcome === null) {
    const locked = await lockCounters(db, tx, tuples(entries, 1));
    outcome = roomOf(scopes, starts, counterMap(locked), input, 0n);
    if ('refusal' in outcome) return { ok: false, refusal: outcome.refusal };
    await tx.run(statementText(addReserved, targets.sql), [
      amountOf(outcome.room, input),
      ...targets.params,
    ]);
  }
  if ('refusal' in outcome) return { ok: false, refusal: outcome.refusal };
  const { room } = outcome;
  const amount = amountOf(room, input);
  await tx.run(
    `INSERT INTO reservations (id, key_id, amount, entries, created_at, limited)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [input.reservationId, input.keyId, amount, encoded, input.now, room !== null ? 1 : 0],
  );
  return {
    ok: true,
    reservation: {
      id: input.reservationId,
      keyId: input.keyId,
      amountMicro: amount,
      limited: room !== null,
    },
  };
}

/**
 * Moves a reservation to spent and releases the rest; `record` adds a ledger row with the same
 * amount. The cost of a limited reservation is never more than the reservation (the buyer was
 * capped there; defence in depth against a wrong report); a key with no limit anywhere is charged
 * what the buyer paid, since nothing told the buyer to stop at the estimate.
 */
export async function settle(db: SqlDb, input: SettleInput, record: boolean): Promise<void> {
  await db.transaction((tx) => settleIn(tx, input, record));
}

/**
 * What settlements sharing a transaction take off `reserved` and add to `spent`, summed per set
 * of counter rows (keyed by the stored entries): one update of those rows for all of them
 * (decision 159).
 */
export type CounterDeltas = Map<string, { entries: Entry[]; released: MicroUsd; spent: MicroUsd }>;

/** Applies summed settlements to their counter rows. */
export async function applyCounterDeltas(tx: SqlExecutor, deltas: CounterDeltas): Promise<void> {
  for (const { entries, released, spent } of deltas.values()) {
    await updateCounters(tx, entries, released, spent);
  }
}

async function updateCounters(
  tx: SqlExecutor,
  entries: Entry[],
  released: MicroUsd,
  spent: MicroUsd,
): Promise<void> {
  // An upsert touches the rows in the same order as `reserve` locks them (never a deadlock);
  // the rows exist, so it only ever updates.
  const targets = tuples(entries, 3);
  await tx.run(statementText(settleCounters, targets.sql), [released, spent, ...targets.params]);
}

/**
 * `settle` inside a transaction the caller holds; with `deltas`, the counter update is added
 * there for `applyCounterDeltas` to make (before anything in the transaction reads counters).
 */
export async function settleIn(
  tx: SqlExecutor,
  input: SettleInput,
  record: boolean,
  deltas?: CounterDeltas,
): Promise<void> {
  const rows = await tx.query(
    `DELETE FROM reservations WHERE id = $1 RETURNING key_id, amount, entries, limited`,
    [input.reservationId],
  );
  const reservation = rows[0];
  if (!reservation) return;
  const amount = bigintOf(reservation.amount);
  const capped = numberOf(reservation.limited) !== 0 && input.costMicro > amount;
  const cost = capped ? amount : input.costMicro < 0n ? 0n : input.costMicro;
  const stored = textOf(reservation.entries);
  const summed = deltas?.get(stored);
  const entries = summed?.entries ?? storedEntries(stored);
  if (summed) {
    summed.released += amount;
    summed.spent += cost;
  } else if (deltas) {
    deltas.set(stored, { entries, released: amount, spent: cost });
  } else {
    await updateCounters(tx, entries, amount, cost);
  }
  if (input.correctLogSince !== undefined) {
    await tx.run(
      `UPDATE request_log SET cost = $1, input_tokens = $2, cached_input_tokens = $3,
         output_tokens = $4, error_code = CASE WHEN error_code = 'spend_tracking_unavailable'
         THEN NULL ELSE error_code END
       WHERE request_id = $5 AND at >= $6`,
      [
        cost,
        input.usage.inputTokens,
        input.usage.cachedInputTokens,
        input.usage.outputTokens,
        input.requestId,
        input.correctLogSince,
      ],
    );
  }
  if (record) {
    const workspaceId = entries.find((e) => e.scope === 'workspace')?.scopeId ?? '';
    const memberId = entries.find((e) => e.scope === 'member')?.scopeId ?? null;
    await tx.run(
      `INSERT INTO ledger (request_id, key_id, member_id, workspace_id, cost, input_tokens,
         cached_input_tokens, output_tokens, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        input.requestId,
        textOf(reservation.key_id),
        memberId,
        workspaceId,
        cost,
        input.usage.inputTokens,
        input.usage.cachedInputTokens,
        input.usage.outputTokens,
        input.now,
      ],
    );
  }
}

/** Settled spend of one scope in each period containing `now`. */
export async function periodSpend(
  db: SqlExecutor,
  level: BudgetLevel,
  scopeId: string,
  now: number,
): Promise<PeriodSpend> {
  const rows = await db.query(
    'SELECT period, period_start, spent FROM budget_usage WHERE scope = $1 AND scope_id = $2',
    [level, scopeId],
  );
  const spend: PeriodSpend = { daily: 0n, weekly: 0n, monthly: 0n, total: 0n };
  for (const row of rows) {
    const period = textOf(row.period) as keyof PeriodSpend;
    if (numberOf(row.period_start) === periodStart(period, now))
      spend[period] = bigintOf(row.spent);
  }
  return spend;
}

/** Requests, spend and tokens of a key, from the ledger. */
export async function keyUsage(db: SqlExecutor, keyId: string): Promise<KeyUsage> {
  const rows = await db.query(
    `SELECT COUNT(*) AS requests, COALESCE(SUM(cost), 0) AS spent,
       COALESCE(SUM(input_tokens), 0) AS input, COALESCE(SUM(cached_input_tokens), 0) AS cached,
       COALESCE(SUM(output_tokens), 0) AS output FROM ledger WHERE key_id = $1`,
    [keyId],
  );
  const row = rows[0] ?? {};
  return {
    requests: numberOf(row.requests),
    spentMicro: bigintOf(row.spent),
    inputTokens: numberOf(row.input),
    cachedInputTokens: numberOf(row.cached),
    outputTokens: numberOf(row.output),
  };
}

/** Reservations older than `before`, oldest first. */
export async function listReservations(
  db: SqlExecutor,
  before: number,
): Promise<Array<{ id: string; keyId: string; amountMicro: MicroUsd; createdAt: number }>> {
  const rows = await db.query(
    'SELECT id, key_id, amount, created_at FROM reservations WHERE created_at < $1 ORDER BY created_at, id',
    [before],
  );
  return rows.map((row) => ({
    id: textOf(row.id),
    keyId: textOf(row.key_id),
    amountMicro: bigintOf(row.amount),
    createdAt: numberOf(row.created_at),
  }));
}
