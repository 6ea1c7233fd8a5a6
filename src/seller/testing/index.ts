/** Test helpers other capabilities reuse: the one fake model vendor. */
export {
  type FakeUpstream,
  type Replay,
  startFakeUpstream,
  TINY_MP4,
} from './fakeUpstreams.js';
