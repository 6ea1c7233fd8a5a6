/**
 * One amount per request (docs/decisions/120-one-amount-and-the-cost-cap.md): what the buyer reports to its client
 * (the `x-svc-estimated-cost-usd` header, the `: svc-usage` comment, the request record) is what
 * it committed to the seller in vouchers for that request — never above the request's cap. The
 * record is journaled before the voucher is signed (docs/decisions/122-request-journal.md).
 */
import { costOfUsage, formatUsd, type MicroUsd } from '../money/index.js';
import type { ProxyContext } from './context.js';
import type { CountedUsage, Delivery, RecordDraft } from './delivery.js';
import type { RequestRecord } from './requestRecords.js';

function recordOf(ctx: ProxyContext, draft: RecordDraft, costMicro: MicroUsd): RequestRecord {
  return {
    ...draft,
    requestId: ctx.request.id,
    latencyMs: ctx.service.deps.clock() - ctx.request.startedAt,
    attempts: [...ctx.attempts],
    costUsd: formatUsd(costMicro),
  };
}

/**
 * Writes the request's record to the journal (durable when this returns), with a paid stream's
 * progress while it is open (src/buyer/streamProgress.ts).
 */
export function journal(
  ctx: ProxyContext,
  draft: RecordDraft,
  costMicro: MicroUsd,
  progress?: string,
): void {
  ctx.service.records.put(recordOf(ctx, draft, costMicro), progress);
}

/**
 * Writes an open stream's record: at once when it is paid, soon otherwise — an unpaid stream
 * has no voucher and journals no progress (docs/decisions/157-buyer-cpu-per-request.md).
 */
export function journalOpen(ctx: ProxyContext, draft: RecordDraft, paid: boolean): void {
  if (paid) journal(ctx, draft, 0n);
  else ctx.service.records.putSoon(recordOf(ctx, draft, 0n));
}

const capped = (amount: MicroUsd, cap: MicroUsd | undefined) =>
  cap !== undefined && amount > cap ? cap : amount;

/**
 * Pays the seller (checks its claim, journals the record, signs the voucher) and returns the
 * amount committed; a failed answer (`counted.failed`) commits nothing and frees the payment.
 * Free offers commit 0; without payments (development) the buyer's count at the seller's price,
 * capped. A payment that fails before it journals commits nothing. A receipt the buyer refused
 * (`draft.receipt`) pays no more than the buyer's own count (decision 168).
 */
export async function commitCost(
  ctx: ProxyContext,
  delivery: Delivery,
  counted: CountedUsage,
): Promise<MicroUsd> {
  const { ok } = delivery;
  const { offer } = delivery.candidate;
  const { usage, claimed, draft } = counted;
  const { deps } = ctx.service;
  const requestId = ctx.request.id;
  // A failed answer is paid nothing: no voucher (docs/decisions/152-nothing-paid-for-failed-answers.md).
  if (counted.failed) {
    if (ok.paid) deps.payments.release?.(requestId);
    return 0n;
  }
  const unpaid = capped(costOfUsage(usage, ok.price), ok.maxCostMicro);
  if (!ok.paid) return offer.free ? 0n : unpaid;
  let committed: MicroUsd | undefined;
  try {
    const outcome = await deps.payments.complete({
      requestId,
      peerId: offer.peerId,
      claimed,
      estimatedUsage: await counted.estimate(),
      price: ok.price,
      serviceId: offer.serviceId,
      ...(draft.receipt !== undefined && draft.receipt !== 'verified'
        ? { receiptRefused: true }
        : {}),
      ...(counted.unitBilled ? { units: true } : {}),
      onCommit: (amountMicro) => {
        committed = amountMicro;
        journal(ctx, draft, amountMicro);
      },
    });
    return outcome === undefined ? unpaid : capped(outcome.amountMicro, ok.maxCostMicro);
  } catch (error) {
    deps.logger.warn({ err: error, requestId }, 'payment completion failed');
    return committed ?? 0n;
  }
}
