/**
 * Every error code a user can hit, with its HTTP status and what to do next. The codes of the
 * public interface come first; later capabilities add theirs here, never inline.
 */

/** OpenAI error `type` values we emit. */
export type OpenAiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'api_error'
  | 'server_error';

/** Anthropic error `type` values we emit. */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error'
  | 'timeout_error';

export interface ErrorCodeSpec {
  status: number;
  /** Default message; says what happened and what to do next. */
  message: string;
}

export const ERROR_CODES = {
  // --- the public interface's codes ---
  unauthorized: {
    status: 401,
    message: 'A valid API key is required: send Authorization: Bearer svc_...',
  },
  not_found: { status: 404, message: 'No such route. See the API reference for supported paths.' },
  topup_not_available: {
    status: 403,
    message:
      'This key pays from its workspace wallet; top-ups are only available for keys with their own wallet.',
  },
  topup_not_allowed: {
    status: 403,
    message:
      'Top-ups are not enabled for this key. An admin can enable them with `svc gateway key topup <keyId> on`.',
  },
  payment_required: {
    status: 402,
    message: 'Payment required: pay the PAYMENT-REQUIRED challenge and retry.',
  },
  gateway_auth_required: {
    status: 401,
    message:
      'Identities other than "default" require the gateway control secret in x-svc-gateway-auth.',
  },
  missing_routing_target: {
    status: 400,
    message:
      'The request names no model and no seller is pinned. Set "model" or the x-svc-pin-peer header.',
  },
  no_default_route: {
    status: 400,
    message:
      'Model "svc" follows the default route, and none is set. Run `svc buyer route set <model>`.',
  },
  insufficient_deposits: {
    status: 402,
    message: 'Not enough USDC deposited to pay this seller. Run `svc buyer deposit` to add funds.',
  },
  upload_body_too_large: {
    status: 413,
    message: "The request body is larger than the seller's upload limit.",
  },
  model_not_found: {
    status: 502,
    message:
      'No seller allowed by your routing preferences offers this model. The models on offer are listed by GET /v1/models (or `svc network browse`).',
  },

  // --- general request errors ---
  invalid_json: { status: 400, message: 'The request body is not valid JSON.' },
  invalid_request: { status: 400, message: 'The request is invalid.' },
  unsupported_media_type: { status: 415, message: 'Send the body as application/json.' },
  body_too_large: { status: 413, message: 'The request body is larger than this server accepts.' },
  headers_too_large: {
    status: 431,
    message:
      'The request headers are larger than this server accepts (16 KB); send fewer or shorter headers.',
  },
  method_not_allowed: { status: 405, message: 'This route does not accept that method.' },
  forbidden_host: {
    status: 403,
    message: 'Requests must come from a loopback Host and Origin (DNS-rebinding protection).',
  },
  rate_limited: { status: 429, message: 'Too many requests. Retry after the time in Retry-After.' },

  // --- buyer / network ---
  unknown_preset: {
    status: 400,
    message: 'No such preset. List presets in buyer.presets of the config.',
  },
  model_type_mismatch: { status: 400, message: 'This model cannot be used on this route.' },
  peer_unreachable: {
    status: 502,
    message:
      'The pinned seller cannot be reached. Run `svc network browse` to see reachable sellers.',
  },
  seller_error: { status: 502, message: 'The seller failed to answer the request.' },
  seller_timeout: { status: 504, message: 'The seller did not answer in time.' },
  max_cost_reached: {
    status: 502,
    message:
      "The seller's answer went past this request's cost cap (its max tokens at the seller's price), so it was cut there; the part before the cap was delivered and is all you pay.",
  },
  seller_overloaded: {
    status: 429,
    message: 'The seller is at its concurrency limit. Retry shortly.',
  },
  upstream_error: { status: 502, message: "The seller's upstream API failed." },
  invalid_seller_response: {
    status: 502,
    message: 'The seller sent a response that could not be understood.',
  },
  seller_answer_too_large: {
    status: 502,
    message:
      "The seller's answer is larger than buyer.answerLimitBytes. Raise the limit in the config to accept it.",
  },
  no_peers_reachable: {
    status: 503,
    message: 'No peers are reachable. Check network.bootstrap in the config and your connection.',
  },
  translation_unsupported: {
    status: 400,
    message: "A parameter of this request cannot be carried to the seller's API format.",
  },
  request_cancelled: { status: 499, message: 'The client cancelled the request.' },
  // Responses API state the buyer keeps (docs/decisions/173-responses-state-kept-by-the-buyer.md).
  previous_response_not_found: {
    status: 400,
    message:
      'The buyer holds no response with this id for this identity (expired, removed, stored with store: false, or never returned by it). Send the whole conversation as input instead.',
  },
  response_item_not_found: {
    status: 400,
    message:
      'The buyer holds no item with this id for this identity (its response expired, was removed or was stored with store: false). Send the item itself instead of an item_reference.',
  },

  // --- payments ---
  chain_unavailable: {
    status: 503,
    message: 'The chain RPC is unreachable. Check chain.rpcUrl in the config.',
  },
  payment_failed: { status: 502, message: 'Paying the seller failed.' },
  // Buyers and sellers refuse to start against it (docs/decisions/176-deploy-and-verify-on-base.md).
  payments_contract_mismatch: {
    status: 502,
    message:
      "The configured payments contract is not this version's SvcPayments. Check chain.paymentsAddress, or deploy one with `svc chain deploy`.",
  },
  deployer_gas_unavailable: {
    status: 402,
    message: 'The deploying wallet holds too little ETH for the gas. Send it ETH and run again.',
  },

  // --- gateway ---
  spend_limit_reached: { status: 402, message: 'A budget has no room for this request.' },
  spend_tracking_unavailable: {
    status: 503,
    message: 'Spend cannot be tracked right now, so keys with limits are refused. Retry shortly.',
  },
  model_not_allowed: { status: 403, message: 'This key may not use that model.' },
  key_quota_reached: {
    status: 403,
    message: 'The member already has as many keys as an admin allows.',
  },
  store_unavailable: {
    status: 503,
    message: 'The gateway database is unavailable. Retry shortly.',
  },
  buyer_unavailable: {
    status: 502,
    message: 'The gateway cannot reach its buyer. Is `svc buyer start` running?',
  },
  topup_amount_invalid: {
    status: 400,
    message: 'The top-up amount is outside the allowed bounds.',
  },
  facilitator_error: { status: 502, message: 'The x402 facilitator failed.' },
  facilitator_unavailable: { status: 503, message: 'The x402 facilitator is unreachable.' },

  // --- network / seller ---
  service_not_offered: {
    status: 404,
    message:
      'This seller does not offer that model on this API path. Run `svc network peer <peer_id>` to see its services.',
  },
  upstream_unavailable: {
    status: 502,
    message: 'The seller cannot reach its upstream API. Retry, or pick another seller.',
  },

  // --- x402 top-ups (src/x402) ---
  topup_payment_invalid: {
    status: 402,
    message:
      'The PAYMENT-SIGNATURE does not pay this top-up. Sign the PAYMENT-REQUIRED challenge of this response and retry.',
  },
  topup_payment_replayed: {
    status: 409,
    message:
      'This payment authorization was already used for a top-up and is credited once only. Sign a new payment.',
  },
  topup_pending: {
    status: 503,
    message:
      'The payment is being settled; it will be credited once it confirms on chain. Check topped_up_usd in GET /v1/key.',
  },

  // --- gateway ---
  topup_not_implemented: {
    status: 501,
    message:
      'Key top-ups are not available on this gateway yet. Fund the wallet with `svc buyer deposit` instead.',
  },
  key_revoked: { status: 401, message: 'This API key has been revoked.' },
  key_expired: { status: 401, message: 'This API key has expired.' },

  // --- web console (docs/decisions/135-console-sign-in.md) ---
  console_sign_in_required: {
    status: 401,
    message:
      'Sign in to the console: paste an API key, or open a link from `svc gateway console login`.',
  },
  console_forbidden: { status: 403, message: 'This console session may not do that.' },
  csrf_invalid: {
    status: 403,
    message:
      'The request lacks a valid CSRF token (x-csrf-token) or comes from another origin; reload the console.',
  },

  // --- local (CLI) ---
  invalid_config: { status: 400, message: 'The configuration is invalid.' },
  invalid_argument: { status: 400, message: 'An argument is invalid.' },
  identity_error: { status: 400, message: 'The identity cannot be used.' },
  identity_removed: {
    status: 403,
    message:
      'This identity was removed (`svc buyer identity remove`) and pays for nothing more. Create it again, or give the key another identity.',
  },
  internal_error: { status: 500, message: 'Something went wrong inside svc. The log has details.' },

  // --- payments ---
  payment_invalid: {
    status: 402,
    message: 'The payment sent with this request is missing or invalid for this seller.',
  },
  channel_lock_exhausted: {
    status: 402,
    message:
      "The payment channel's lock cannot cover this request. The buyer tops it up automatically; retry.",
  },
  channel_not_found: {
    status: 404,
    message: 'No such payment channel. List channels with `svc buyer channels list`.',
  },
  // --- media routes (images, video, systemone; src/buyer/media) ---
  video_price_above_ceiling: {
    status: 402,
    message: 'The buyer refuses videos priced above 5.00 USD. Choose a cheaper video model.',
  },
  video_job_not_found: {
    status: 404,
    message: 'This buyer did not queue a video job with that queue_id.',
  },

  // --- gasless deposit sweep (decision 080) ---
  deposit_gas_unavailable: {
    status: 503,
    message:
      'Wallet USDC cannot be deposited yet: neither the wallet nor the relayer identity holds ETH for gas. Send a little ETH to the address named.',
  },

  // --- gateway tunnel relay (src/tunnel) ---
  gateway_offline: {
    status: 502,
    message:
      'That gateway is not connected to this tunnel relay. Is `svc gateway start --tunnel` running?',
  },
  gateway_failed: { status: 502, message: 'The gateway failed to answer through the tunnel.' },
  gateway_timeout: {
    status: 504,
    message: 'The gateway did not answer through the tunnel in time.',
  },
  tunnel_busy: {
    status: 503,
    message: 'Too many requests are open to this gateway through the tunnel. Retry shortly.',
  },
} as const satisfies Record<string, ErrorCodeSpec>;

/** A stable machine-readable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** True when `code` is a known error code. */
export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** OpenAI-style `type` for a status. */
export function openAiTypeForStatus(status: number): OpenAiErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'insufficient_quota';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return status === 500 ? 'server_error' : 'api_error';
  return 'invalid_request_error';
}

/** Anthropic-style `type` for a status (mirrors Anthropic's documented status/type table). */
export function anthropicTypeForStatus(status: number): AnthropicErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'billing_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 504) return 'timeout_error';
  if (status === 529 || status === 503) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}
