/** Test helpers other capabilities reuse: loopback nodes, fresh identities, polling. */
export {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from './loopback.js';
