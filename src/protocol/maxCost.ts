/**
 * The cost cap a gateway puts on a request (`x-svc-max-cost-usd`) and how both sides read a
 * request without max tokens under it (docs/decisions/170-max-tokens-under-a-cost-cap.md).
 */

/**
 * Output tokens a request that sets no max tokens may use under a cost cap: the gateway reserves
 * for that many, and the buyer asks the seller for that many (never more, never fewer).
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4_096;

/** The refusal detail (402 `spend_limit_reached`) naming the most output tokens that fit. */
export const MAX_TOKENS_THAT_FIT = 'max_tokens_that_fit';
