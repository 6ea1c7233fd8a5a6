/** Protocol constants of x402 v2 as the top-up route uses them. */
import type { Address } from 'viem';

/** The x402 protocol version the gateway speaks. */
export const X402_VERSION = 2;

/** Header carrying the base64 JSON challenge on a 402 answer. */
export const PAYMENT_REQUIRED_HEADER = 'PAYMENT-REQUIRED';
/** Header carrying the client's base64 JSON signed payment. */
export const PAYMENT_SIGNATURE_HEADER = 'PAYMENT-SIGNATURE';
/** Header carrying the base64 JSON settle result. */
export const PAYMENT_RESPONSE_HEADER = 'PAYMENT-RESPONSE';

/** The only scheme offered: a fixed amount paid by an EIP-3009 authorization. */
export const EXACT_SCHEME = 'exact';

/** How long a signed authorization may take to reach the chain (sets the client's validBefore). */
export const DEFAULT_MAX_TIMEOUT_SECONDS = 300;

/**
 * An authorization must stay valid at least this long after we check it, so it cannot
 * expire between our check and the facilitator's transaction (the facilitator uses 6 s too).
 */
export const VALID_BEFORE_MARGIN_SECONDS = 6;

/**
 * Clock skew allowed on top of `maxTimeoutSeconds` for validBefore. A longer-lived authorization
 * is refused: if its settlement were lost, its row would stay pending until it expires.
 */
export const VALID_BEFORE_SKEW_SECONDS = 120;

/** A stablecoin the top-up is paid in, with the EIP-712 domain its EIP-3009 signatures use. */
export interface TopupAsset {
  chainId: number;
  /** Token contract address. */
  address: Address;
  /** EIP-712 domain name of the token. */
  eip712Name: string;
  /** EIP-712 domain version of the token. */
  eip712Version: string;
}

/** Circle USDC on Base mainnet: what production top-ups are paid in. */
export const BASE_USDC: TopupAsset = {
  chainId: 8453,
  address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  eip712Name: 'USD Coin',
  eip712Version: '2',
};

/** Circle USDC on Base Sepolia (testnet). */
export const BASE_SEPOLIA_USDC: TopupAsset = {
  chainId: 84532,
  address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  eip712Name: 'USDC',
  eip712Version: '2',
};

/** The CAIP-2 id of an EVM chain, e.g. `eip155:8453`. */
export function networkOf(chainId: number): `eip155:${number}` {
  return `eip155:${chainId}`;
}
