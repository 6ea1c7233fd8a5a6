/** Test helpers other capabilities reuse: fake upstream model APIs. */
export {
  type FakeFault,
  type FakeUpstream,
  type FakeUpstreamOptions,
  type RecordedRequest,
  startFakeUpstream,
} from './fakeUpstreams.js';
