/** Test helpers of x402, for other folders' tests (never imported by production code). */

export {
  officialPayment,
  paymentHeader,
  startTopupHarness,
  type TopupHarness,
} from './topupHarness.js';
export { topupLedgerContract } from './topupLedgerContract.js';
