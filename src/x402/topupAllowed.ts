/**
 * The key rules of a top-up (spec 7, the 403s), asked first by the gateway route and by the
 * service: a key that may never be topped up is told so before anything about the gateway's
 * set-up or the key's wallet, which its holder cannot change.
 */
import { SvcError } from '../errors/index.js';
import type { TopupKey } from './types.js';

/** Throws `topup_not_available` (a workspace wallet) or `topup_not_allowed` (top-ups off). */
export function checkTopupAllowed(key: Pick<TopupKey, 'ownWallet' | 'topupEnabled'>): void {
  if (!key.ownWallet) throw new SvcError('topup_not_available');
  if (!key.topupEnabled) throw new SvcError('topup_not_allowed');
}
