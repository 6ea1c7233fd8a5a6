/** Turns handler outcomes into framework-neutral HTTP replies. */
import { encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { renderOpenAiError, type SvcError } from '../errors/index.js';
import { encodeChallenge } from './challenge.js';
import { PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER } from './constants.js';
import type { TopupReply } from './types.js';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
/** Challenges and payment results are per key and per request: never cached. */
const NO_STORE = { 'cache-control': 'no-store' };

/** An error reply, optionally carrying a challenge or a settle result. */
export function errorReply(
  error: SvcError,
  extras: { challenge?: PaymentRequired; settle?: SettleResponse } = {},
): TopupReply {
  const headers: Record<string, string> = { ...JSON_TYPE, ...NO_STORE, ...(error.headers ?? {}) };
  if (extras.challenge) headers[PAYMENT_REQUIRED_HEADER] = encodeChallenge(extras.challenge);
  if (extras.settle) headers[PAYMENT_RESPONSE_HEADER] = encodePaymentResponseHeader(extras.settle);
  return { status: error.status, headers, body: renderOpenAiError(error) };
}

/** 200 with the settle result in PAYMENT-RESPONSE. */
export function successReply(settle: SettleResponse, body: unknown): TopupReply {
  return {
    status: 200,
    headers: {
      ...JSON_TYPE,
      ...NO_STORE,
      [PAYMENT_RESPONSE_HEADER]: encodePaymentResponseHeader(settle),
    },
    body,
  };
}
