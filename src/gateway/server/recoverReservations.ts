/**
 * Crash recovery: a reservation still held long after its request must have been orphaned by a
 * gateway that stopped between reserve and settle. It is settled with what the buyer says the
 * request (same id) cost, or with the whole reservation when the buyer does not know it — never
 * less than was possibly spent.
 */
import type { Dispatcher } from 'undici';
import type { Logger } from '../../log/index.js';
import type { GatewayStore } from '../store/types.js';
import { lookupCost, reportOf } from './costReport.js';

export interface RecoverOptions {
  store: GatewayStore;
  buyer: Dispatcher;
  now: number;
  /** Only reservations older than this are touched (other gateways' requests may be running). */
  staleAfterMs: number;
  logger: Logger;
}

/** Settles stale reservations; returns how many. */
export async function recoverReservations(options: RecoverOptions): Promise<number> {
  const stale = await options.store.listReservations(options.now - options.staleAfterMs);
  for (const reservation of stale) {
    const report = reportOf(await lookupCost(options.buyer, reservation.id, { attempts: 1 }));
    await options.store.settle({
      reservationId: reservation.id,
      requestId: reservation.id,
      costMicro: report?.costMicro ?? reservation.amountMicro,
      usage: report?.usage ?? { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
      now: options.now,
    });
    options.logger.warn(
      { requestId: reservation.id, keyId: reservation.keyId, known: Boolean(report) },
      'settled an orphaned budget reservation',
    );
  }
  return stale.length;
}
