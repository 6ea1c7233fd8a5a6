/**
 * Calls the facilitator and sorts what can go wrong: a timeout or an unreachable facilitator is
 * 503 `facilitator_unavailable`; a malformed or failed answer is 502 `facilitator_error`; a
 * verify/settle verdict (`isValid:false`, `success:false`) is returned, not thrown.
 */
import type { FacilitatorClient } from '@x402/core/server';
import {
  FacilitatorTimeoutError,
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SettleResponse,
  VerifyError,
  type VerifyResponse,
} from '@x402/core/types';
import { errorMessage, isSvcError, SvcError } from '../../errors/index.js';

/** A facilitator call that did not give a verdict; `indeterminate` if it may have settled. */
export function facilitatorFailure(error: unknown, operation: 'verify' | 'settle'): SvcError {
  if (isSvcError(error)) return error;
  const indeterminate = operation === 'settle';
  if (error instanceof FacilitatorTimeoutError || isConnectionError(error)) {
    const why =
      error instanceof FacilitatorTimeoutError
        ? `did not answer ${operation} within ${error.timeoutMs} ms`
        : `cannot be reached for ${operation}`;
    return new SvcError('facilitator_unavailable', {
      message: `The x402 facilitator ${why}. Nothing was credited${indeterminate ? '; if the payment still settles on chain it will be credited then' : ''}. Retry shortly.`,
      details: { operation },
      headers: { 'Retry-After': '10' },
      cause: error,
    });
  }
  const detail = errorMessage(error);
  return new SvcError('facilitator_error', {
    message: `The x402 facilitator failed to ${operation} the payment: ${detail.slice(0, 300)}. Nothing was credited.`,
    details: { operation },
    cause: error,
  });
}

/** verify → the facilitator's verdict, or throws an SvcError 502/503. */
export async function verifyWith(
  facilitator: FacilitatorClient,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<VerifyResponse> {
  try {
    return await facilitator.verify(payload, requirements);
  } catch (error) {
    if (error instanceof VerifyError) {
      return {
        isValid: false,
        invalidReason: error.invalidReason ?? 'invalid_payment',
        ...(error.invalidMessage ? { invalidMessage: error.invalidMessage } : {}),
        ...(error.payer ? { payer: error.payer } : {}),
      };
    }
    throw facilitatorFailure(error, 'verify');
  }
}

/** settle → the facilitator's result, or throws an SvcError 502/503. */
export async function settleWith(
  facilitator: FacilitatorClient,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<SettleResponse> {
  try {
    return await facilitator.settle(payload, requirements);
  } catch (error) {
    if (error instanceof SettleError) {
      return {
        success: false,
        errorReason: error.errorReason ?? 'settlement_failed',
        ...(error.errorMessage ? { errorMessage: error.errorMessage } : {}),
        ...(error.payer ? { payer: error.payer } : {}),
        transaction: error.transaction ?? '',
        network: error.network ?? requirements.network,
      } as SettleResponse;
    }
    throw facilitatorFailure(error, 'settle');
  }
}

function isConnectionError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      [
        'ECONNREFUSED',
        'ECONNRESET',
        'ENOTFOUND',
        'EAI_AGAIN',
        'EHOSTUNREACH',
        'UND_ERR_SOCKET',
        'UND_ERR_CONNECT_TIMEOUT',
      ].includes(code)
    ) {
      return true;
    }
    if (current.name === 'TypeError' && current.message === 'fetch failed') return true;
    current = current.cause;
  }
  return false;
}
