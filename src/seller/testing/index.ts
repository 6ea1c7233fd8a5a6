/** Test helpers other capabilities reuse: fake upstream model APIs. */
export {
  type FakeFault,
  type FakeUpstream,
  type FakeUpstreamOptions,
  type RecordedRequest,
  startFakeUpstream,
} from './fakeUpstreams.js';
export { type FakeVideoUpstream, startFakeVideoUpstream, TINY_MP4 } from './fakeVideoUpstream.js';
