/** Test and benchmark helpers of the gateway used from other folders: a gateway process, a harness. */
export { startGatewayProcess } from './gatewayProcess.js';
export { startHarness } from './harness.js';
