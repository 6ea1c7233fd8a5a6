/** Balances shown by `svc buyer identity list --balances`. */
import type { IdentityListing } from '../../../identity/index.js';
import type { CliContext } from '../../context.js';

export interface BalanceReport {
  /** One line for the table. */
  summary: string;
  walletUsdc?: string;
  creditsUsdc?: string;
}

/**
 * Reads wallet and credit balances for each identity. The chain layer is not part of the
 * build yet, so every identity reports that plainly instead of a made-up number.
 */
export async function readBalances(
  _ctx: CliContext,
  listings: IdentityListing[],
): Promise<BalanceReport[]> {
  return listings.map(() => ({ summary: 'chain not configured' }));
}
