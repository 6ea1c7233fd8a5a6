/** ETH amounts in USD, exactly: wei × (micro-USD per ETH) / 10^18, rounded up (a cost is never understated). */
import { formatEther, formatGwei } from 'viem';
import { ceilDiv, formatUsd, parseUsd } from '../money/index.js';

const WEI_PER_ETH = 10n ** 18n;

/**
 * The ETH price a cost is shown at when none is given. svc reads no price feed (it talks only to
 * the chain's RPC), so a cost in USD is at a price the operator states; this one is only a
 * round figure for the order of magnitude, and every output names it.
 */
export const DEFAULT_ETH_USD = '3000';

/** Micro-USD of `wei` at `ethUsd` (a USD amount like "3000" or "2543.17"). */
export function weiToMicroUsd(wei: bigint, ethUsd: string): bigint {
  return ceilDiv(wei * parseUsd(ethUsd), WEI_PER_ETH);
}

/** "0.000012 ETH (0.036000 USD at 3000 USD/ETH)". */
export function describeWei(wei: bigint, ethUsd: string): string {
  return `${formatEther(wei)} ETH (${formatUsd(weiToMicroUsd(wei, ethUsd))} USD at ${ethUsd} USD/ETH)`;
}

/** "0.012 gwei". */
export function describeGasPrice(wei: bigint): string {
  return `${formatGwei(wei)} gwei`;
}
