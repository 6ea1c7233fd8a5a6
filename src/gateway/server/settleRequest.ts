/**
 * Settling one proxied request: charge what the buyer says it cost, capped at the reservation, or
 * leave the reservation held when the cost is unknown.
 */

import type { LogRow, Reservation } from '../store/types.js';
import { type CostReport, lookupCost, reportOf } from './costReport.js';
import type { GatewayDeps } from './deps.js';

/** What settling one request needs. */
export interface Billing {
  deps: GatewayDeps;
  reservation: Reservation | null;
  requestId: string;
  log: LogRow;
}

/** Settles (asking the buyer when the answer carried no cost) or, for free routes, just logs. */
export async function settleRequest(billing: Billing, report: CostReport | null): Promise<void> {
  const { deps, reservation, requestId, log } = billing;
  if (reservation) {
    const known = report ?? reportOf(await lookupCost(deps.buyer, requestId));
    await settle(deps, reservation, requestId, known, log);
  } else if (report) {
    applyReport(log, report);
  }
}

function applyReport(log: LogRow, report: CostReport): void {
  log.costMicro = report.costMicro;
  log.inputTokens = report.usage.inputTokens;
  log.cachedInputTokens = report.usage.cachedInputTokens;
  log.outputTokens = report.usage.outputTokens;
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
  log: LogRow,
): Promise<void> {
  if (!report) {
    log.errorCode ??= 'spend_tracking_unavailable';
    return;
  }
  // The store caps a limited reservation's charge too; the log shows the same amount.
  const charged: CostReport = { costMicro: report.costMicro, usage: report.usage };
  if (reservation.limited && report.costMicro > reservation.amountMicro)
    charged.costMicro = reservation.amountMicro;
  applyReport(log, charged);
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
}
