/** The buyer's video job map on disk: a restarted buyer still routes retrieves to the right seller. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PeerId } from '../../identity/index.js';
import { VideoJobs, videoJobsPath } from './video.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-video-jobs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SELLER = '1111111111111111111111111111111111111111' as PeerId;

describe('VideoJobs', () => {
  it('remembers jobs across a restart (same data dir)', () => {
    const path = videoJobsPath(dir);
    const before = new VideoJobs(path);
    before.remember('video-queue', 'job-1', { peerId: SELLER, serviceId: 'vid-1', queuedAt: 5 });
    const after = new VideoJobs(path);
    expect(after.get('video-queue', 'job-1')).toEqual({
      peerId: SELLER,
      serviceId: 'vid-1',
      queuedAt: 5,
    });
    expect(after.get('fal-video', 'job-1')).toBeUndefined();
  });

  it('starts empty from a corrupt file and writes a good one on the next job', () => {
    const path = join(dir, 'corrupt', 'video-jobs.json');
    new VideoJobs(path).remember('video-queue', 'x', {
      peerId: SELLER,
      serviceId: 'v',
      queuedAt: 1,
    });
    writeFileSync(path, '{"version":1,"jobs":[["video-queue|x",{"peerId":42}]]}');
    const loaded = new VideoJobs(path);
    expect(loaded.get('video-queue', 'x')).toBeUndefined();
    loaded.remember('video-queue', 'y', { peerId: SELLER, serviceId: 'v', queuedAt: 2 });
    expect(new VideoJobs(path).get('video-queue', 'y')?.serviceId).toBe('v');
  });
});
