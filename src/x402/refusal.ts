/** A payment the gateway refuses: 402 `topup_payment_invalid` with a stable `reason`. */
import { SvcError } from '../errors/index.js';

/** Why a PAYMENT-SIGNATURE was refused before or by the facilitator. */
export type RefusalReason =
  | 'invalid_payment_header'
  | 'unsupported_x402_version'
  | 'unsupported_payload'
  | 'scheme_mismatch'
  | 'network_mismatch'
  | 'asset_mismatch'
  | 'payee_mismatch'
  | 'amount_mismatch'
  | 'authorization_expired'
  | 'authorization_not_yet_valid'
  | 'authorization_too_long'
  | 'invalid_signature'
  | 'insufficient_funds'
  | 'authorization_used'
  | 'facilitator_rejected'
  | 'settlement_failed';

/** Builds the error; `facilitatorReason` keeps the facilitator's own words when it decided. */
export function refusePayment(
  reason: RefusalReason,
  message: string,
  facilitatorReason?: string,
): SvcError {
  return new SvcError('topup_payment_invalid', {
    message: `${message} Sign the PAYMENT-REQUIRED challenge of this response and retry.`,
    details: { reason, ...(facilitatorReason ? { facilitator_reason: facilitatorReason } : {}) },
  });
}

/** The `reason` of a refusal error, if it is one. */
export function refusalReason(error: SvcError): string | undefined {
  const reason = error.details?.reason;
  return typeof reason === 'string' ? reason : undefined;
}
