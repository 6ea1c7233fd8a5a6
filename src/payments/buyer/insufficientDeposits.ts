/** The error of a request the identity's deposited credits cannot cover, saying what to do. */
import type { Address } from 'viem';
import { SvcError } from '../../errors/index.js';
import { formatUsd, type MicroUsd } from '../../money/index.js';

export function insufficientDeposits(facts: {
  /** What the lock must grow by. */
  needed: MicroUsd;
  /** Credits the identity has free. */
  available: MicroUsd;
  /** USDC in the wallet, not yet deposited. */
  wallet: MicroUsd;
  identity: string;
  address: Address;
}): SvcError {
  const { needed, available, wallet, identity, address } = facts;
  const shortfall = needed - available;
  const arriving =
    wallet > 0n
      ? ` ${formatUsd(wallet)} USDC in the wallet will be deposited within a minute.`
      : '';
  return new SvcError('insufficient_deposits', {
    message: `Not enough USDC deposited: this request needs ${formatUsd(shortfall)} USD more in credits for ${identity} (${address}).${arriving} Run \`svc buyer deposit\` to add funds.`,
    details: {
      neededUsd: formatUsd(shortfall),
      requiredUsd: formatUsd(needed),
      availableUsd: formatUsd(available),
      walletUsd: formatUsd(wallet),
      identity,
      address,
    },
  });
}
