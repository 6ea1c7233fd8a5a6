/** Test helpers of x402, for other folders' tests (never imported by production code). */

export {
  sampleTopup,
  type TopupLedgerFixture,
  topupLedgerContract,
} from '../ledger/topupLedgerContract.js';
export { type StubServer, startStubServer } from './httpStub.js';
export {
  ANVIL_FACILITATOR_KEY,
  craftedPayment,
  officialPayment,
  paymentHeader,
  startTopupHarness,
  type TopupHarness,
} from './topupHarness.js';
export { startTopupHttpServer, type TopupHttpServer } from './topupHttpServer.js';
