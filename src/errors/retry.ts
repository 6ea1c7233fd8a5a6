/**
 * Which errors a retry can fix. The official OpenAI and Anthropic SDKs (and Claude Code) honour
 * `x-should-retry: false` and give up at once instead of retrying a 5xx for minutes; the rule is
 * in docs/decisions/125-errors-agents-do-not-retry.md.
 */

/** Header the official SDKs read before their own status-based retry rule. */
export const SHOULD_RETRY_HEADER = 'x-should-retry';

/** 4xx statuses a client may retry as they are (timeout, conflict, rate limit, cancel). */
const RETRYABLE_CLIENT_STATUSES = new Set([408, 409, 429, 499]);

/** Codes a retry fixes although the status says "client error": the buyer tops the lock up. */
const RETRYABLE_CODES = new Set(['channel_lock_exhausted']);

/** 5xx codes no retry can fix: nothing on the network offers the model asked for. */
const PERMANENT_CODES = new Set(['model_not_found', 'topup_not_implemented']);

/** True when the same request, sent again unchanged, may succeed. */
export function retryCanFix(code: string, status: number): boolean {
  if (RETRYABLE_CODES.has(code)) return true;
  if (PERMANENT_CODES.has(code)) return false;
  if (status >= 500) return true;
  return RETRYABLE_CLIENT_STATUSES.has(status);
}
