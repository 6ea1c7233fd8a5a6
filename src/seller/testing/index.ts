/** Test helpers other capabilities reuse: fake upstream model APIs. */
export { type FakeUpstream, startFakeUpstream } from './fakeUpstreams.js';
export { type FakeVideoUpstream, startFakeVideoUpstream, TINY_MP4 } from './fakeVideoUpstream.js';
