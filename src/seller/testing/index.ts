/** Test helpers other capabilities reuse: the one fake model vendor. */
export {
  type FakeUpstream,
  startFakeUpstream,
  TINY_MP4,
} from './fakeUpstreams.js';
export { type HostileReceipts, hostileReceipts } from './hostileReceipts.js';
