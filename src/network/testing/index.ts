/** Test helpers other capabilities reuse: loopback nodes, fresh identities, polling. */
export {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  type TestIdentity,
  waitFor,
} from './loopback.js';
