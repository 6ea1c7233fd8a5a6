/**
 * Crash recovery: a reservation still held after its request must have been orphaned by a gateway
 * that stopped between reserve and settle. It is settled with what the buyer's journal says the
 * request (same id) committed to its seller (docs/decisions/122-request-journal.md):
 * - a completed record: its cost (any reservation older than `settleKnownAfterMs`);
 * - no record, and the reservation is newer than the buyer's journal start: nothing was
 *   committed for it (the buyer journals before it signs), so 0 — once stale;
 * - no record, and the reservation is older than the journal (its record may have aged out, or
 *   the buyer does not say): the whole reservation, never less than was possibly spent — once stale;
 * - buyer unreachable, or the request still in flight: left held for the next round.
 */
import type { Dispatcher } from 'undici';
import type { Logger } from '../../log/index.js';
import type { MicroUsd } from '../../money/index.js';
import type { GatewayStore, TokenCounts } from '../store/types.js';
import { lookupRecord, reportOfRecord } from './costReport.js';

export interface RecoverOptions {
  store: GatewayStore;
  buyer: Dispatcher;
  now: number;
  /** Reservations without a completed record are touched only past this age (requests may run). */
  staleAfterMs: number;
  /** Reservations with a completed record are settled past this age (default 60 s). */
  settleKnownAfterMs?: number;
  logger: Logger;
}

/**
 * A log row is stamped when its request arrives, before its body is read and its reservation
 * made; the request timeout bounds the gap.
 */
const LOG_ROW_SLACK_MS = 10 * 60_000;

const NO_TOKENS: TokenCounts = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };

/** Settles orphaned reservations; returns how many. */
export async function recoverReservations(options: RecoverOptions): Promise<number> {
  const knownAfter = options.settleKnownAfterMs ?? 60_000;
  const candidates = await options.store.listReservations(
    options.now - Math.min(knownAfter, options.staleAfterMs),
  );
  let settled = 0;
  for (const reservation of candidates) {
    const stale = reservation.createdAt < options.now - options.staleAfterMs;
    const looked = await lookupRecord(options.buyer, reservation.id);
    let charge: { costMicro: MicroUsd; usage: TokenCounts; reason: string } | null = null;
    if (looked.kind === 'record' && (looked.record.completed || looked.record.errorCode)) {
      charge = { ...reportOfRecord(looked.record), reason: 'buyer record' };
    } else if (looked.kind === 'unknown' && stale) {
      const provenNone =
        looked.journalSinceMs !== null && reservation.createdAt >= looked.journalSinceMs;
      charge = provenNone
        ? { costMicro: 0n, usage: NO_TOKENS, reason: 'no buyer record within its journal' }
        : {
            costMicro: reservation.amountMicro,
            usage: NO_TOKENS,
            reason: 'no buyer record, past its journal retention',
          };
    }
    if (!charge) continue;
    await options.store.settle({
      reservationId: reservation.id,
      requestId: reservation.id,
      costMicro: charge.costMicro,
      usage: charge.usage,
      now: options.now,
      // The request's log row (written when it ended, at cost 0) shows what was charged.
      correctLogSince: reservation.createdAt - LOG_ROW_SLACK_MS,
    });
    settled++;
    options.logger.warn(
      { requestId: reservation.id, keyId: reservation.keyId, reason: charge.reason },
      'settled an orphaned budget reservation',
    );
  }
  return settled;
}
