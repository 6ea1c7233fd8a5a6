/** Test helpers of x402, for other folders' tests (never imported by production code). */

export { topupLedgerContract } from '../ledger/topupLedgerContract.js';
export {
  officialPayment,
  paymentHeader,
  startTopupHarness,
  type TopupHarness,
} from './topupHarness.js';
