/**
 * Budget counters and reservations. `reserve` locks every counter row the request touches (key,
 * member and workspace × four periods, always in that order), checks each limited one has room,
 * and adds the reservation to all of them — one transaction, so concurrent requests on one or
 * many gateways can never together exceed a limit.
 */
import type { MicroUsd } from '../../../money/index.js';
import { effectiveKeyLimits } from '../../budget/effectiveLimits.js';
import { periodResetsAt, periodStart } from '../../budget/periods.js';
import {
  type BudgetLevel,
  type BudgetRefusal,
  type KeyUsage,
  type Limits,
  NO_LIMITS,
  PERIODS,
  type PeriodSpend,
  type ReserveResult,
  type SettleInput,
} from '../types.js';
import { limitsOf } from './rows.js';
import { bigintOf, numberOf, type SqlDb, type SqlExecutor, textOf } from './SqlDb.js';

interface Entry {
  scope: BudgetLevel;
  scopeId: string;
  period: (typeof PERIODS)[number];
  periodStart: number;
}

async function scopesOf(
  tx: SqlExecutor,
  keyId: string,
): Promise<Array<{ scope: BudgetLevel; scopeId: string; limits: Limits }> | null> {
  const keys = await tx.query('SELECT * FROM api_keys WHERE id = $1', [keyId]);
  const key = keys[0];
  if (!key) return null;
  const scopes: Array<{ scope: BudgetLevel; scopeId: string; limits: Limits }> = [
    {
      scope: 'key',
      scopeId: keyId,
      limits: effectiveKeyLimits(limitsOf(key, 'admin_'), limitsOf(key, 'owner_')),
    },
  ];
  const memberId = key.member_id ? textOf(key.member_id) : null;
  if (memberId) {
    const members = await tx.query('SELECT * FROM members WHERE id = $1', [memberId]);
    scopes.push({
      scope: 'member',
      scopeId: memberId,
      limits: members[0] ? limitsOf(members[0]) : NO_LIMITS,
    });
  }
  const workspaceId = textOf(key.workspace_id);
  const workspaces = await tx.query('SELECT * FROM workspaces WHERE id = $1', [workspaceId]);
  scopes.push({
    scope: 'workspace',
    scopeId: workspaceId,
    limits: workspaces[0] ? limitsOf(workspaces[0]) : NO_LIMITS,
  });
  return scopes;
}

const PK = 'scope = $1 AND scope_id = $2 AND period = $3 AND period_start = $4';

/** Reserves min(maxAmount, smallest room) on every counter of the key, atomically. */
export async function reserve(
  db: SqlDb,
  input: { reservationId: string; keyId: string; maxAmountMicro: MicroUsd; now: number },
): Promise<ReserveResult> {
  return db.transaction(async (tx) => {
    const scopes = await scopesOf(tx, input.keyId);
    if (!scopes) throw new Error(`unknown key ${input.keyId}`);
    const entries: Entry[] = [];
    let room: MicroUsd | null = null;
    for (const { scope, scopeId, limits } of scopes) {
      for (const period of PERIODS) {
        const entry = { scope, scopeId, period, periodStart: periodStart(period, input.now) };
        const key = [scope, scopeId, period, entry.periodStart] as const;
        await tx.run(
          `INSERT INTO budget_usage (scope, scope_id, period, period_start, spent, reserved)
           VALUES ($1, $2, $3, $4, 0, 0) ON CONFLICT DO NOTHING`,
          key,
        );
        const rows = await tx.query(
          `SELECT spent, reserved FROM budget_usage WHERE ${PK}${tx.forUpdate}`,
          key,
        );
        entries.push(entry);
        const limit = limits[period];
        if (limit === null) continue;
        const spent = bigintOf(rows[0]?.spent);
        const committed = spent + bigintOf(rows[0]?.reserved);
        const left = limit - committed;
        if (left <= 0n) {
          const refusal: BudgetRefusal = {
            level: scope,
            period,
            limitMicro: limit,
            spentMicro: spent,
            committedMicro: committed,
            resetsAt: periodResetsAt(period, input.now),
          };
          return { ok: false, refusal };
        }
        if (room === null || left < room) room = left;
      }
    }
    const amount = room !== null && room < input.maxAmountMicro ? room : input.maxAmountMicro;
    for (const entry of entries) {
      await tx.run(`UPDATE budget_usage SET reserved = reserved + $5 WHERE ${PK}`, [
        entry.scope,
        entry.scopeId,
        entry.period,
        entry.periodStart,
        amount,
      ]);
    }
    await tx.run(
      'INSERT INTO reservations (id, key_id, amount, entries, created_at) VALUES ($1, $2, $3, $4, $5)',
      [input.reservationId, input.keyId, amount, JSON.stringify(entries), input.now],
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
  });
}

/** Moves a reservation to spent (`cost`) and releases the rest; `record` adds a ledger row. */
export async function settle(db: SqlDb, input: SettleInput, record: boolean): Promise<void> {
  await db.transaction(async (tx) => {
    const rows = await tx.query(`SELECT * FROM reservations WHERE id = $1${tx.forUpdate}`, [
      input.reservationId,
    ]);
    const reservation = rows[0];
    if (!reservation) return;
    const amount = bigintOf(reservation.amount);
    const entries = JSON.parse(textOf(reservation.entries)) as Entry[];
    let workspaceId = '';
    let memberId: string | null = null;
    for (const entry of entries) {
      if (entry.scope === 'workspace') workspaceId = entry.scopeId;
      if (entry.scope === 'member') memberId = entry.scopeId;
      await tx.run(
        `UPDATE budget_usage SET reserved = reserved - $5, spent = spent + $6 WHERE ${PK}`,
        [entry.scope, entry.scopeId, entry.period, entry.periodStart, amount, input.costMicro],
      );
    }
    if (record) {
      await tx.run(
        `INSERT INTO ledger (request_id, key_id, member_id, workspace_id, cost, input_tokens,
           cached_input_tokens, output_tokens, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          input.requestId,
          textOf(reservation.key_id),
          memberId,
          workspaceId,
          input.costMicro,
          input.usage.inputTokens,
          input.usage.cachedInputTokens,
          input.usage.outputTokens,
          input.now,
        ],
      );
    }
    await tx.run('DELETE FROM reservations WHERE id = $1', [input.reservationId]);
  });
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
