/** EIP-3009 typed-data definitions, exactly as USDC (FiatTokenV2) defines them. */

/** The fields every EIP-3009 authorization signs. */
const AUTHORIZATION_FIELDS = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const;

/** `transferWithAuthorization`: anyone may submit it (x402 payments). */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: AUTHORIZATION_FIELDS,
} as const;

/** `receiveWithAuthorization`: only the payee contract may submit it (deposits). */
export const RECEIVE_WITH_AUTHORIZATION_TYPES = {
  ReceiveWithAuthorization: AUTHORIZATION_FIELDS,
} as const;
