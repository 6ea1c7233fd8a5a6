/**
 * Failover rules: what to do after a failed attempt.
 * `next`: try the next ranked offer (retryable and blamed on the seller); `same`: retry the
 * same seller (429 with an acceptable Retry-After); `stop`: hand the failure to the client;
 * `skip`: the offer cannot take this request (it would cost more than the request's cost cap),
 * so the next one is tried without sending anything and without counting against the seller.
 */
// Type only: the rules need no transport code (`svc buyer route …` loads routing without libp2p).
import type { TransportError } from '../network/index.js';

export type FailoverAction = 'next' | 'same' | 'stop' | 'skip';

/** Most tries of one seller when it answers 429: the first and two retries (docs/guide/buyer.md, failover). */
export const MAX_SAME_SELLER_TRIES = 3;

/** The action after a seller answered with an error status. */
export function actionForStatus(status: number): FailoverAction {
  if (status === 429) return 'same';
  if (status === 408 || status >= 500) return 'next';
  return 'stop';
}

/** The action after a transport failure: only failures before the response head move on. */
export function actionForTransportError(
  error: Pick<TransportError, 'failure' | 'beforeHead'>,
): FailoverAction {
  if (!error.beforeHead) return 'stop';
  switch (error.failure) {
    case 'unreachable':
    case 'reset':
    case 'timeout':
    case 'protocol':
      return 'next';
    default:
      return 'stop';
  }
}

/**
 * Milliseconds to wait from a Retry-After header (seconds or an HTTP date), or undefined when
 * absent, unparseable or longer than `maxWaitMs` (then the next seller is tried instead).
 */
export function retryAfterMs(
  header: string | undefined,
  maxWaitMs: number,
  now: number = Date.now(),
): number | undefined {
  if (header === undefined) return 0;
  const trimmed = header.trim();
  let waitMs: number;
  if (/^\d+(\.\d+)?$/.test(trimmed)) waitMs = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    waitMs = Math.max(0, at - now);
  }
  return waitMs <= maxWaitMs ? waitMs : undefined;
}
