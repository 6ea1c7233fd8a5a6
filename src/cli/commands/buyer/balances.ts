/** Balances shown by `svc buyer identity list --balances` and `svc buyer deposit`. */
import type { Address } from 'viem';
import { type ConnectedChain, connectChain } from '../../../chain/index.js';
import { errorMessage } from '../../../errors/index.js';
import type { IdentityListing } from '../../../identity/index.js';
import { formatUsd } from '../../../money/index.js';
import type { CliContext } from '../../context.js';

export interface BalanceReport {
  /** One line for the table. */
  summary: string;
  walletUsdc?: string;
  creditsUsdc?: string;
  /** Why balances are missing (no deployment, chain unreachable). */
  error?: string;
}

/** Connects to the configured chain, or explains why it cannot. */
export function tryConnect(ctx: CliContext): ConnectedChain | { error: string } {
  try {
    return connectChain(ctx.loadConfig().config.chain, ctx.dataDir);
  } catch (error) {
    return { error: errorMessage(error) };
  }
}

/** Wallet USDC and deposited credits of one address, or a clear reason they are unknown. */
export async function readBalance(chain: ConnectedChain, address: Address): Promise<BalanceReport> {
  try {
    const [wallet, credits] = await Promise.all([
      chain.contract.usdcBalanceOf(address),
      chain.contract.creditsOf(address),
    ]);
    const walletUsdc = formatUsd(wallet);
    const creditsUsdc = formatUsd(credits);
    return {
      summary: `wallet ${walletUsdc} USDC, credits ${creditsUsdc} USDC`,
      walletUsdc,
      creditsUsdc,
    };
  } catch {
    const error = `chain unreachable at ${chain.rpcUrl}`;
    return { summary: error, error };
  }
}

/** Reads wallet and credit balances for each identity from the chain. */
export async function readBalances(
  ctx: CliContext,
  listings: IdentityListing[],
): Promise<BalanceReport[]> {
  const chain = tryConnect(ctx);
  if ('error' in chain) return listings.map(() => ({ summary: chain.error, error: chain.error }));
  const reports: BalanceReport[] = [];
  for (const listing of listings) {
    const report = await readBalance(chain, listing.address);
    reports.push(report);
    // One unreachable answer is enough: do not wait on the RPC once per identity.
    if (report.error) return listings.map(() => report);
  }
  return reports;
}
