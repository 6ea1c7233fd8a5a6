/**
 * Settling one proxied request: charge what the buyer says it cost, capped at the reservation, or
 * leave the reservation held when the cost is unknown. Returns what the request's log row shows.
 */

import type { Reservation } from '../store/types.js';
import { type CostReport, lookupCost, reportOf } from './costReport.js';
import type { GatewayDeps } from './deps.js';
import type { LogFacts } from './requestLog.js';

/** What settling one request needs. */
export interface Billing {
  deps: GatewayDeps;
  reservation: Reservation | null;
  requestId: string;
}

/** Settles (asking the buyer when the answer carried no cost) or, for free routes, just logs. */
export async function settleRequest(
  billing: Billing,
  report: CostReport | null,
): Promise<LogFacts> {
  const { deps, reservation, requestId } = billing;
  if (reservation) {
    const known = report ?? reportOf(await lookupCost(deps.buyer, requestId));
    return settle(deps, reservation, requestId, known);
  }
  return report ? reportFacts(report) : {};
}

function reportFacts(report: CostReport): LogFacts {
  return {
    costMicro: report.costMicro,
    inputTokens: report.usage.inputTokens,
    cachedInputTokens: report.usage.cachedInputTokens,
    outputTokens: report.usage.outputTokens,
  };
}

/** The error code of a request whose spend is not known yet (the reservation stays held). */
const SPEND_UNKNOWN = 'spend_tracking_unavailable';

/**
 * The facts known before settling with what settling learned: an error the answer already showed
 * stays the row's error; a spend left unknown is the error of a request that had none.
 */
export function afterSettling(known: LogFacts, settled: LogFacts): LogFacts {
  const errorCode = known.errorCode ?? settled.errorCode;
  return { ...known, ...settled, ...(errorCode !== undefined ? { errorCode } : {}) };
}

/**
 * Settles a reservation. An unknown cost (the buyer down or the request still open at the buyer)
 * leaves the reservation held, so it still counts against every budget, and recovery settles it
 * with what the buyer's journal says was committed (docs/decisions/122-request-journal.md): a
 * buyer killed mid-stream does not cost the key its whole reservation.
 */
export async function settle(
  deps: GatewayDeps,
  reservation: Reservation,
  requestId: string,
  report: CostReport | null,
): Promise<LogFacts> {
  if (!report) return { errorCode: SPEND_UNKNOWN };
  // The store caps a limited reservation's charge too; the log shows the same amount.
  const charged: CostReport = { costMicro: report.costMicro, usage: report.usage };
  if (reservation.limited && report.costMicro > reservation.amountMicro)
    charged.costMicro = reservation.amountMicro;
  try {
    await deps.store.settle({
      reservationId: reservation.id,
      requestId,
      costMicro: charged.costMicro,
      usage: charged.usage,
      now: deps.now(),
    });
  } catch (error) {
    // The reservation stays held (counted against the budgets) until an operator settles it.
    deps.logger.error({ err: error, requestId }, 'settling a reservation failed');
  }
  return reportFacts(charged);
}
