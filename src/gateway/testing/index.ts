/** Test and benchmark helpers of the gateway: a stub buyer speaking the buyer seam, a harness. */
export { startTestPostgres, type TestPostgres } from './embeddedPostgres.js';
export { type GatewayProcess, startGatewayProcess } from './gatewayProcess.js';
export { eventually, type Harness, type HarnessOptions, jsonOf, startHarness } from './harness.js';
export {
  STUB_PEER_ID,
  type StubBuyer,
  type StubBuyerOptions,
  startStubBuyer,
} from './stubBuyer.js';
