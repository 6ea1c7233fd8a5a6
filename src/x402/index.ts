/**
 * x402: key top-ups paid with x402 v2 — the challenge, the gateway's own payment
 * checks, facilitator presets and calls, the exactly-once ledger contract, reconciliation, the
 * local facilitator server, and a client that pays a top-up with the official x402 client.
 */

export { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../chain/index.js';
export { parseTopupAmount, topupBounds } from './amount.js';
export { type AuthorizationUse, type TopupChainReader, viemChainReader } from './chainReader.js';
export { encodeChallenge, paymentRequired, topupRequirements } from './challenge.js';
export { checkPayment } from './checkPayment.js';
export {
  BASE_SEPOLIA_USDC,
  BASE_USDC,
  DEFAULT_MAX_TIMEOUT_SECONDS,
  networkOf,
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  type TopupAsset,
  X402_VERSION,
} from './constants.js';
export {
  type CreatedTopupService,
  type CreateTopupServiceOptions,
  createTopupService,
  defaultFacilitatorFor,
  loadTopupAsset,
} from './createTopupService.js';
export { type DecodedPayment, decodePayment, type Eip3009Authorization } from './decodePayment.js';
export {
  CDP_FACILITATOR_URL,
  DEFAULT_FACILITATOR_TIMEOUT_MS,
  FACILITATOR_ENV,
  FACILITATOR_PRESETS,
  LOCAL_FACILITATOR_PORT,
  LOCAL_FACILITATOR_URL,
  type ResolvedFacilitator,
  type ResolveOptions,
  resolveFacilitator,
  X402_ORG_FACILITATOR_URL,
} from './facilitator/resolveFacilitator.js';
export { MemoryTopupLedger } from './ledger/MemoryTopupLedger.js';
export {
  type BeginTopupResult,
  type NewTopup,
  normalizePaymentId,
  type TopupLedger,
  type TopupPaymentId,
  type TopupRow,
  type TopupState,
} from './ledger/TopupLedger.js';
export { type PayTopupOptions, type PayTopupResult, payTopup } from './payTopup.js';
export { type ReconcileResult, reconcilePendingTopups } from './reconcile.js';
export {
  type FacilitatorServerOptions,
  type RunningFacilitatorServer,
  startFacilitatorServer,
} from './server/facilitatorServer.js';
export {
  createLocalFacilitator,
  type LocalFacilitator,
  type LocalFacilitatorOptions,
} from './server/localFacilitator.js';
export { TopupService, type TopupServiceOptions } from './TopupService.js';
export { checkTopupAllowed } from './topupAllowed.js';
export { type TopupsFromConfigOptions, topupsFromConfig } from './topupsFromConfig.js';
export type { TopupBounds, TopupKey, TopupReply, TopupRequest } from './types.js';
