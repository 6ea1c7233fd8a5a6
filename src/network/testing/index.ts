/** Test helpers other capabilities reuse: loopback nodes, fresh identities, polling. */
// The variable a hole-punching fixture sets to punch from one fixed port (src/node/testing/netnsPeer.ts).
export { HOLE_PUNCH_PORT_ENV } from '../holePunch.js';
export {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  type TestIdentity,
  waitFor,
} from './loopback.js';
