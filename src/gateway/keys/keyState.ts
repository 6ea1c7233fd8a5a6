/** Key states: active, revoked, expired. */
import type { KeyRecord } from '../store/types.js';

export type KeyState = 'active' | 'revoked' | 'expired';

/** The state of `key` at `now`. */
export function keyState(key: KeyRecord, now: number): KeyState {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && now >= key.expiresAt) return 'expired';
  return 'active';
}
