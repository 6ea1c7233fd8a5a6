/** Builds the PAYMENT-REQUIRED challenge of a top-up. */
import { encodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { Address } from 'viem';
import { getAddress } from 'viem';
import { formatUsd, type MicroUsd } from '../money/index.js';
import {
  DEFAULT_MAX_TIMEOUT_SECONDS,
  EXACT_SCHEME,
  networkOf,
  type TopupAsset,
  X402_VERSION,
} from './constants.js';

export interface RequirementsInput {
  asset: TopupAsset;
  /** The key's own wallet. */
  payTo: Address;
  /** USDC has 6 decimals, so micro-USD are exactly its atomic units. */
  amountMicro: MicroUsd;
  maxTimeoutSeconds?: number;
}

/** The one `accepts` entry: exact scheme, the chain's USDC, paid to the key's wallet. */
export function topupRequirements(input: RequirementsInput): PaymentRequirements {
  return {
    scheme: EXACT_SCHEME,
    network: networkOf(input.asset.chainId),
    amount: input.amountMicro.toString(),
    asset: getAddress(input.asset.address),
    payTo: getAddress(input.payTo),
    maxTimeoutSeconds: input.maxTimeoutSeconds ?? DEFAULT_MAX_TIMEOUT_SECONDS,
    extra: { name: input.asset.eip712Name, version: input.asset.eip712Version },
  };
}

/** The whole challenge; `error` says why an earlier payment was refused. */
export function paymentRequired(
  requirements: PaymentRequirements,
  resourceUrl: string,
  keyId: string,
  error?: string,
): PaymentRequired {
  return {
    x402Version: X402_VERSION,
    ...(error ? { error } : {}),
    resource: {
      url: resourceUrl,
      description: `Top up API key ${keyId} with ${formatUsd(BigInt(requirements.amount))} USD`,
      mimeType: 'application/json',
    },
    accepts: [requirements],
  };
}

/** The challenge as the base64 header value. */
export function encodeChallenge(challenge: PaymentRequired): string {
  return encodePaymentRequiredHeader(challenge);
}
