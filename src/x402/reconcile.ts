/**
 * Settles the books for pending top-ups: a row stays pending while its settlement is unknown
 * (facilitator timeout, crash between settle and credit). The chain decides: if the
 * authorization moved the amount to the key's wallet, credit it (once); if the nonce was used
 * otherwise, or it expired unused, fail it; else leave it for the next round.
 */
import { isAddressEqual } from 'viem';
import type { Logger } from '../log/index.js';
import type { TopupChainReader } from './chainReader.js';
import type { TopupLedger, TopupRow } from './ledger/TopupLedger.js';

export interface ReconcileResult {
  credited: number;
  failed: number;
  stillPending: number;
}

export interface ReconcileDeps {
  ledger: TopupLedger;
  chain: TopupChainReader;
  clock: () => number;
  logger?: Logger | undefined;
}

/** One pass over every pending row. */
export async function reconcilePendingTopups(deps: ReconcileDeps): Promise<ReconcileResult> {
  const result: ReconcileResult = { credited: 0, failed: 0, stillPending: 0 };
  const rows = await deps.ledger.listPendingTopups();
  if (rows.length === 0) return result;
  const chainNow = await deps.chain.latestTimestamp();
  for (const row of rows) {
    const outcome = await reconcileRow(deps, row, chainNow);
    if (outcome === 'credited') result.credited += 1;
    else if (outcome === 'failed') result.failed += 1;
    else result.stillPending += 1;
  }
  return result;
}

/** Decides one row from the chain; returns what became of it. */
export async function reconcileRow(
  deps: ReconcileDeps,
  row: TopupRow,
  chainNowSeconds: bigint,
): Promise<'credited' | 'failed' | 'pending'> {
  const use = await deps.chain.findAuthorizationUse({
    asset: row.asset,
    payer: row.payer,
    nonce: row.nonce,
    fromBlock: row.fromBlock,
  });
  if (use) {
    const paid = use.transfers.some(
      (transfer) => isAddressEqual(transfer.to, row.payTo) && transfer.value === row.amountMicro,
    );
    if (paid) {
      const credited = await deps.ledger.creditTopup(row.id, use.transaction, deps.clock());
      deps.logger?.info(
        { topupId: row.id, keyId: row.keyId, transaction: use.transaction, credited },
        'reconciled top-up: settled on chain',
      );
      return 'credited';
    }
    await deps.ledger.failTopup(row.id, 'authorization_used_elsewhere', deps.clock());
    deps.logger?.warn(
      { topupId: row.id, keyId: row.keyId },
      'reconciled top-up: authorization used without paying the key',
    );
    return 'failed';
  }
  if (chainNowSeconds >= row.validBefore) {
    await deps.ledger.failTopup(row.id, 'authorization_expired_unsettled', deps.clock());
    deps.logger?.info(
      { topupId: row.id, keyId: row.keyId },
      'reconciled top-up: expired without settling',
    );
    return 'failed';
  }
  return 'pending';
}
