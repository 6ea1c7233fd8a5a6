/**
 * The gateway's own checks of a payment, run BEFORE any facilitator call: it must pay exactly
 * this challenge (scheme, network, asset, payee, amount), be valid now, and be signed by its payer.
 */
import type { PaymentRequirements } from '@x402/core/types';
import { getAddress, isAddressEqual, recoverTypedDataAddress } from 'viem';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../chain/index.js';
import { VALID_BEFORE_MARGIN_SECONDS, VALID_BEFORE_SKEW_SECONDS } from './constants.js';
import type { DecodedPayment } from './decodePayment.js';
import { refusePayment } from './refusal.js';

/** Throws a 402 refusal naming the first mismatch; returns when the payment fits. */
export async function checkPayment(
  payment: DecodedPayment,
  requirements: PaymentRequirements,
  nowSeconds: number,
): Promise<void> {
  const { accepted } = payment.payload;
  const auth = payment.authorization;
  if (accepted.scheme !== requirements.scheme) {
    throw refusePayment(
      'scheme_mismatch',
      `The payment uses scheme "${accepted.scheme}"; "${requirements.scheme}" is required.`,
    );
  }
  if (accepted.network !== requirements.network) {
    throw refusePayment(
      'network_mismatch',
      `The payment is for network ${accepted.network}; ${requirements.network} is required.`,
    );
  }
  if (!sameAddress(accepted.asset, requirements.asset)) {
    throw refusePayment(
      'asset_mismatch',
      `The payment is in asset ${accepted.asset}; ${requirements.asset} is required.`,
    );
  }
  if (
    !sameAddress(accepted.payTo, requirements.payTo) ||
    !sameAddress(auth.to, requirements.payTo)
  ) {
    throw refusePayment(
      'payee_mismatch',
      `The payment pays ${auth.to}; it must pay the key's wallet ${requirements.payTo}.`,
    );
  }
  const required = BigInt(requirements.amount);
  if (accepted.amount !== requirements.amount || auth.value !== required) {
    throw refusePayment(
      'amount_mismatch',
      `The payment authorizes ${auth.value} atomic units; the top-up is ${required}.`,
    );
  }
  if (auth.validBefore < BigInt(nowSeconds + VALID_BEFORE_MARGIN_SECONDS)) {
    throw refusePayment(
      'authorization_expired',
      'The payment authorization has expired (validBefore is past).',
    );
  }
  const latestValidBefore = nowSeconds + requirements.maxTimeoutSeconds + VALID_BEFORE_SKEW_SECONDS;
  if (auth.validBefore > BigInt(latestValidBefore)) {
    throw refusePayment(
      'authorization_too_long',
      `The payment authorization stays valid too long: validBefore may be at most ${requirements.maxTimeoutSeconds} s from now.`,
    );
  }
  if (auth.validAfter > BigInt(nowSeconds)) {
    throw refusePayment(
      'authorization_not_yet_valid',
      'The payment authorization is not valid yet (validAfter is in the future).',
    );
  }
  await checkSignature(payment, requirements);
}

/**
 * Recovers the signer of a plain 65-byte ECDSA signature. Longer signatures come from smart
 * wallets (ERC-1271 / ERC-6492); only the facilitator can check those against the chain.
 */
async function checkSignature(
  payment: DecodedPayment,
  requirements: PaymentRequirements,
): Promise<void> {
  if (payment.signature.length !== 132) return;
  const name = requirements.extra.name;
  const version = requirements.extra.version;
  let signer: string;
  try {
    signer = await recoverTypedDataAddress({
      domain: {
        name: String(name),
        version: String(version),
        chainId: Number(requirements.network.split(':')[1]),
        verifyingContract: getAddress(requirements.asset),
      },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: payment.authorization,
      signature: payment.signature,
    });
  } catch {
    throw refusePayment('invalid_signature', 'The payment signature cannot be parsed.');
  }
  if (!isAddressEqual(signer as `0x${string}`, payment.authorization.from)) {
    throw refusePayment(
      'invalid_signature',
      'The payment signature was not made by the payer (authorization.from).',
    );
  }
}

function sameAddress(a: string, b: string): boolean {
  try {
    return isAddressEqual(getAddress(a), getAddress(b));
  } catch {
    return false;
  }
}
