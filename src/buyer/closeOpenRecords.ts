/**
 * At start, before serving: the requests a stopped buyer left open are over. A paid stream whose
 * progress was journaled is paid what it delivered — a late cumulative voucher on the channel with
 * its seller, journaled before it is signed — and every other open record closes at 0
 * (docs/decisions/154-late-voucher-after-a-crash.md). Each closes with `buyer_restarted` at what
 * was signed for it, which is what the gateway's recovery charges the key.
 */
import { addressFromPeerId } from '../identity/index.js';
import type { Logger } from '../log/index.js';
import { formatUsd, type MicroUsd } from '../money/index.js';
import type { BuyerPayments } from './payments.js';
import type { RequestRecords } from './requestRecords.js';
import { decodeStreamPayment, deliveredCostMicro, type StreamPayment } from './streamProgress.js';

export interface ClosedOpenRecords {
  /** Open records closed. */
  closed: number;
  /** Of those, paid a late voucher. */
  paid: number;
  /** Sum of the late vouchers' amounts. */
  paidMicro: MicroUsd;
}

/** Pays one stream's delivered part; what was signed for it (0 when nothing could be). */
async function payDelivered(
  records: RequestRecords,
  payments: BuyerPayments,
  logger: Logger,
  record: Parameters<RequestRecords['closeRestarted']>[0],
  payment: StreamPayment,
): Promise<MicroUsd> {
  const amount = deliveredCostMicro(payment);
  const { requestId } = record;
  if (amount === 0n) return 0n;
  if (!payments.payLate) {
    logger.warn(
      { requestId, owedUsd: formatUsd(amount) },
      'a stream delivered before the restart cannot be paid: payments are not running',
    );
    return 0n;
  }
  let journaled = false;
  try {
    const outcome = await payments.payLate({
      requestId,
      identity: payment.identity,
      peerId: payment.peerId,
      sellerAddress: addressFromPeerId(payment.peerId),
      amountMicro: amount,
      usage: payment.usage,
      onCommit: (committed) => {
        // Before the voucher is signed: a voucher never exists without its record.
        records.closeRestarted(record, formatUsd(committed));
        journaled = true;
      },
    });
    if (outcome !== undefined) return outcome.amountMicro;
    logger.warn(
      { requestId, peerId: payment.peerId, owedUsd: formatUsd(amount) },
      'a stream delivered before the restart was not paid: no open channel with its seller',
    );
  } catch (error) {
    logger.warn(
      { err: error, requestId, peerId: payment.peerId, owedUsd: formatUsd(amount) },
      'signing the voucher of a stream delivered before the restart failed: not paid',
    );
  }
  // Nothing was signed: the record says so, whatever was journaled before the failure.
  if (journaled) records.closeRestarted(record, formatUsd(0n));
  return 0n;
}

/** Closes every open record (paying what journaled streams delivered); returns the tally. */
export async function closeOpenRecords(
  records: RequestRecords,
  payments: BuyerPayments,
  logger: Logger,
): Promise<ClosedOpenRecords> {
  const tally: ClosedOpenRecords = { closed: 0, paid: 0, paidMicro: 0n };
  for (const { record, progress } of records.openWithProgress()) {
    const payment = progress === undefined ? undefined : decodeStreamPayment(progress);
    const paid = payment ? await payDelivered(records, payments, logger, record, payment) : 0n;
    if (paid === 0n) records.closeRestarted(record, formatUsd(0n));
    tally.closed++;
    if (paid > 0n) {
      tally.paid++;
      tally.paidMicro += paid;
    }
  }
  if (tally.paid > 0) {
    logger.info(
      { streams: tally.paid, paidUsd: formatUsd(tally.paidMicro) },
      'paid the sellers of streams delivered before the restart',
    );
  }
  return tally;
}
