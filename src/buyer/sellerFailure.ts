/**
 * A failed attempt at one seller, classified for failover (docs/decisions/052-failover.md): the
 * seller's error body read (bounded) into a message and the code `release` is told about, and
 * transport failures mapped to error codes.
 */
import { SvcError } from '../errors/index.js';
import type { SellerResponse, TransportError } from '../network/index.js';
import { actionForTransportError, type FailoverAction } from '../routing/index.js';
import type { ProxyContext } from './context.js';

export interface AttemptFailure {
  kind: 'failed';
  action: FailoverAction | 'cancelled';
  error: SvcError;
  /** For `x-svc-attempts` and the failure metric, e.g. `503`, `timeout`, `cut`. */
  label: string;
  retryAfter?: string;
}

/**
 * The label of a paid request a seller refused for want of lock on its channel: the buyer tries
 * the same seller again with a grown lock, and the seller's health is not marked down for it.
 */
export const LOCK_EXHAUSTED = 'lock_exhausted';

/** What `BuyerPayments.release` is told about the seller's refusal. */
export type SellerErrorInfo = { code?: string; details?: Record<string, unknown> };

const MAX_ERROR_BODY = 64 * 1024;

export function failure(
  action: FailoverAction | 'cancelled',
  error: SvcError,
  label: string,
  retryAfter?: string,
): AttemptFailure {
  return retryAfter === undefined
    ? { kind: 'failed', action, error, label }
    : { kind: 'failed', action, error, label, retryAfter };
}

export function cancelled(): AttemptFailure {
  return failure('cancelled', new SvcError('request_cancelled'), 'cancelled');
}

/** The first 64 KiB of a seller's error body; a body cut short still tells us the status. */
export async function readErrorBody(response: SellerResponse): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      if (size < MAX_ERROR_BODY) chunks.push(chunk);
      size += chunk.length;
    }
  } catch {
    // keep what arrived
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BODY);
}

/** The human message of a seller's error body (either API style), or its start. */
export function sellerMessage(text: string): string {
  try {
    const json = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof json.error === 'string') return json.error;
    if (typeof json.error?.message === 'string') return json.error.message;
    if (typeof json.message === 'string') return json.message;
  } catch {
    // not JSON
  }
  return text.slice(0, 500) || '(empty body)';
}

/** The seller's SvcError code and details, when its error body is one. */
export function sellerErrorOf(text: string): SellerErrorInfo {
  try {
    // Error bodies carry the code and details inside `error` (both API styles).
    const json = JSON.parse(text) as { error?: Record<string, unknown> };
    const error = typeof json.error === 'object' && json.error !== null ? json.error : {};
    const code = typeof error.code === 'string' ? error.code : undefined;
    return { ...(code ? { code } : {}), details: error };
  } catch {
    return {};
  }
}

/** A seller's error status as a failure (429 is retried on the same seller). */
export function statusFailure(
  peerId: string,
  status: number,
  text: string,
  action: FailoverAction,
  retryAfter: string | undefined,
): AttemptFailure {
  const error = new SvcError(status === 429 ? 'rate_limited' : 'upstream_error', {
    status,
    message: `Seller ${peerId} answered ${status}: ${sellerMessage(text)}`,
    details: { peerId, sellerStatus: status },
    ...(retryAfter ? { headers: { 'retry-after': retryAfter } } : {}),
  });
  return failure(action, error, String(status), retryAfter);
}

/** A transport failure before the answer reached the client. */
export function transportFailure(
  error: TransportError,
  ctx: ProxyContext,
  timedOut: boolean,
): AttemptFailure {
  const peerId = error.peerId;
  if (ctx.clientAbort.signal.aborted) return cancelled();
  if (timedOut || error.failure === 'timeout') {
    return failure(
      'next',
      new SvcError('seller_timeout', {
        message: `Seller ${peerId} sent no response within ${ctx.service.deps.config.sellerHeadTimeoutSeconds} s.`,
        details: { peerId },
      }),
      'timeout',
    );
  }
  const action = actionForTransportError(error);
  if (error.failure === 'unreachable') {
    return failure(
      action,
      new SvcError('peer_unreachable', {
        message: `Seller ${peerId} cannot be reached. Run \`svc network browse\` to see reachable sellers.`,
        details: { peerId },
      }),
      'unreachable',
    );
  }
  if (error.failure === 'too_large') {
    return failure(
      'stop',
      new SvcError('upload_body_too_large', { details: { peerId } }),
      'too_large',
    );
  }
  return failure(
    action,
    new SvcError('seller_error', {
      message: `Seller ${peerId} failed: ${error.message}.`,
      details: { peerId, failure: error.failure },
    }),
    error.failure,
  );
}
