/** Test and benchmark helpers of the gateway used from other folders: a gateway process, a harness. */
export { startTestPostgres, type TestPostgres } from './embeddedPostgres.js';
export { startGatewayProcess } from './gatewayProcess.js';
export { startHarness } from './harness.js';
