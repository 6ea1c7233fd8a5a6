/**
 * Video jobs end to end (queue, pending, mp4 from the same seller, the provider endpoint id as
 * model, the 5.00 USD ceiling), decision questions and the model-type check, through the buyer
 * on real libp2p to real sellers relaying to fake upstreams.
 */
import { describe, expect, it } from 'vitest';
import { TINY_MP4 } from '../../seller/testing/index.js';
import { mediaMarket } from '../testing/mediaMarket.js';

const market = mediaMarket();

describe('video, decision and typed routes over libp2p with real sellers', () => {
  it('queues a video, reports pending, then delivers the mp4 from the same seller', async () => {
    const start = market.video.requests.length;
    const queued = await market.post('/api/v1/video/queue', {
      model: `${market.small.node.peerId}@kling-2`,
      prompt: 'a cat surfing',
      duration: '5s',
    });
    expect(queued.status).toBe(200);
    const job = (await queued.json()) as { queue_id: string };
    expect(job.queue_id).toMatch(/^job_/);
    expect(queued.headers.get('x-svc-estimated-cost-usd')).toBe('0.000000');
    const queueRequest = market.video.requests.at(-1)!;
    expect(queueRequest).toMatchObject({
      path: '/api/v1/video/queue',
      body: { model: 'kling-2', duration: '5s' },
    });

    const pending = await market.post('/api/v1/video/retrieve', {
      model: `${market.small.node.peerId}@kling-2`,
      queue_id: job.queue_id,
    });
    expect(pending.status).toBe(200);
    expect(pending.headers.get('content-type')).toContain('application/json');
    expect(await pending.json()).toMatchObject({ queue_id: job.queue_id, status: 'in_progress' });
    expect(pending.headers.get('x-svc-estimated-cost-usd')).toBe('0.000000');

    const done = await market.post('/api/v1/video/retrieve', {
      model: 'kling-2',
      queue_id: job.queue_id,
    });
    expect(done.status).toBe(200);
    expect(done.headers.get('content-type')).toBe('video/mp4');
    expect(done.headers.get('x-svc-peer-id')).toBe(market.small.node.peerId);
    expect(Buffer.from(await done.arrayBuffer()).equals(TINY_MP4)).toBe(true);
    expect(done.headers.get('x-svc-estimated-cost-usd')).toBe('0.500000');
    const retrieves = market.video.requests
      .slice(start)
      .filter((r) => r.path === '/api/v1/video/retrieve');
    expect(
      retrieves.every((r) => (r.body as { queue_id?: unknown }).queue_id === job.queue_id),
    ).toBe(true);
    // The cheaper seller of kling-2 never saw the job.
    expect(market.otherVideo.requests).toHaveLength(0);
  });

  it('runs the second video format with the provider endpoint id as model', async () => {
    const model = 'fal-ai/kling-video/v2/master/text-to-video';
    const queued = await market.post('/fal/v1/video/queue', { model, prompt: 'waves' });
    expect(queued.status).toBe(200);
    const { queue_id } = (await queued.json()) as { queue_id: string };
    expect(market.video.requests.at(-1)!.path).toBe('/fal/v1/video/queue');
    await market.post('/fal/v1/video/retrieve', { model, queue_id });
    const done = await market.post('/fal/v1/video/retrieve', { model, queue_id });
    expect(done.headers.get('content-type')).toBe('video/mp4');
    // A queue_id of the other format is unknown here.
    const unknown = await market.post('/api/v1/video/retrieve', { model, queue_id });
    expect(unknown.status).toBe(404);
  });

  it('refuses a video priced above 5.00 USD, naming the price', async () => {
    const before = market.video.requests.length;
    const response = await market.post('/api/v1/video/queue', {
      model: `${market.small.node.peerId}@sora-pro`,
      prompt: 'p',
      duration: '4s',
    });
    expect(response.status).toBe(402);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('video_price_above_ceiling');
    expect(body.error.message).toContain('6.000000 USD');
    expect(market.video.requests.length).toBe(before);
    // Unpinned: every seller of the model is above the ceiling.
    const automatic = await market.post('/api/v1/video/queue', { model: 'sora-pro', prompt: 'p' });
    expect(automatic.status).toBe(402);
    expect(((await automatic.json()) as { error: { message: string } }).error.message).toContain(
      '6.000000 USD',
    );
    const badDuration = await market.post('/api/v1/video/queue', {
      model: 'kling-2',
      prompt: 'p',
      duration: '5 seconds',
    });
    expect(badDuration.status).toBe(400);
  });

  it('answers a systemone decision question', async () => {
    const response = await market.post('/v1/systemone', {
      model: 'judge-1',
      question: 'Is the sky blue or green on a clear day?',
      options: ['green', 'blue sky'],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(market.small.node.peerId);
    expect(await response.json()).toMatchObject({ model: 'judge-1', answer: 'blue sky' });
    const invalid = await market.post('/v1/systemone', { model: 'judge-1' });
    expect(invalid.status).toBe(400);
  });

  it('answers 400 model_type_mismatch when a model is sent to the wrong route', async () => {
    const onImages = await market.post('/v1/images/generations', {
      model: 'demo-chat',
      prompt: 'p',
    });
    expect(onImages.status).toBe(400);
    expect(((await onImages.json()) as { error: { code: string } }).error.code).toBe(
      'model_type_mismatch',
    );
    const onChat = await market.post('/v1/chat/completions', {
      model: 'gpt-image-1',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(onChat.status).toBe(400);
    const onDecisions = await market.post('/v1/systemone', { model: 'kling-2', question: 'q' });
    expect(onDecisions.status).toBe(400);
  });
});
