/**
 * Media routes end to end: the buyer on real libp2p with real seller nodes relaying to fake
 * OpenAI-images and video upstreams: per-image routing and billing, multipart edits pinned by
 * header, upload limits, video jobs (queue, pending, mp4, same seller), the 5.00 USD ceiling,
 * decision questions and the model-type check.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SellerConfig } from '../../config/index.js';
import { defaultConfig } from '../../config/index.js';
import { silentLogger } from '../../log/index.js';
import type { SvcNode } from '../../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
} from '../../network/testing/loopback.js';
import { type SellerHandle, startSeller } from '../../seller/index.js';
import { type FakeUpstream, startFakeUpstream, TINY_MP4 } from '../../seller/testing/index.js';
import { type RunningBuyerNode, runBuyerNode } from '../runBuyerNode.js';
import { waitForDiscovery } from '../testing/discovery.js';
import { scoreAll } from '../testing/testBuyer.js';

const FREE = { inputUsdPerMillion: 0, outputUsdPerMillion: 0 };

/** The headers spec 4.5 gives every non-streaming answer. */
const SPEC_HEADERS = [
  'x-svc-request-id',
  'x-svc-peer-id',
  'x-svc-provider',
  'x-svc-service',
  'x-svc-input-tokens',
  'x-svc-cached-input-tokens',
  'x-svc-output-tokens',
  'x-svc-total-tokens',
  'x-svc-token-source',
  'x-svc-estimated-cost-usd',
  'x-svc-input-usd-per-million',
  'x-svc-output-usd-per-million',
  'x-svc-cached-input-usd-per-million',
  'x-svc-latency-ms',
  'x-svc-peer-reputation',
];

function imageProvider(
  upstream: FakeUpstream,
  imageUsd: number,
): SellerConfig['providers'][number] {
  return {
    type: 'openai-images',
    name: 'openai',
    baseUrl: upstream.baseUrl,
    services: {
      'gpt-image-1': { upstreamModel: 'gpt-image-1-upstream', categories: [], imageUsd },
    },
    defaultPricing: FREE,
    maxConcurrency: 8,
  };
}

describe('media routes over libp2p with real sellers', () => {
  let bootstrap: SvcNode;
  let cheapImages: FakeUpstream;
  let dearImages: FakeUpstream;
  let video: FakeUpstream;
  let otherVideo: FakeUpstream;
  let small: SellerHandle;
  let big: SellerHandle;
  let buyer: RunningBuyerNode;
  let dataDir: string;
  let openai: OpenAI;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${buyer.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-buyer-media-'));
    bootstrap = await startLoopbackNode('bootstrap');
    const network = loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] });
    cheapImages = await startFakeUpstream();
    dearImages = await startFakeUpstream();
    video = await startFakeUpstream({ videoPollsUntilDone: 1 });
    otherVideo = await startFakeUpstream({ videoPollsUntilDone: 0 });
    // "small": cheap images, 64 KiB upload limit, video, decisions and a text demo model.
    small = await startSeller({
      identity: randomIdentity(),
      network,
      seller: {
        displayName: 'small',
        uploadLimitBytes: 64 * 1024,
        providers: [
          imageProvider(cheapImages, 0.02),
          {
            type: 'video',
            name: 'videos',
            baseUrl: video.url,
            services: {
              'kling-2': { categories: [], videoUsd: 0.5 },
              'fal-ai/kling-video/v2/master/text-to-video': { categories: [], videoUsd: 0.75 },
              'sora-pro': { categories: [], videoUsd: 6 },
            },
            defaultPricing: FREE,
            maxConcurrency: 4,
          },
          {
            type: 'systemone',
            name: 'judges',
            services: { 'judge-1': { categories: [] } },
            defaultPricing: FREE,
            maxConcurrency: 4,
          },
          {
            type: 'demo',
            services: { 'demo-chat': { categories: [] } },
            defaultPricing: FREE,
            maxConcurrency: 4,
          },
        ],
      },
    });
    big = await startSeller({
      identity: randomIdentity(),
      network,
      seller: {
        displayName: 'big',
        uploadLimitBytes: 1024 * 1024,
        providers: [
          imageProvider(dearImages, 0.05),
          // A cheaper seller of the same video model: automatic routing would pick it.
          {
            type: 'video',
            baseUrl: otherVideo.url,
            services: { 'kling-2': { categories: [], videoUsd: 0.4 } },
            defaultPricing: FREE,
            maxConcurrency: 4,
          },
        ],
      },
    });
    buyer = await runBuyerNode({
      config: { ...defaultConfig(), network },
      dataDir,
      identity: randomIdentity(),
      logger: silentLogger(),
      port: 0,
      payments: 'unpaid-dev',
      reputation: scoreAll(80),
    });
    await waitForDiscovery(
      buyer,
      () => buyer.directory.list().filter((peer) => peer.reachable).length === 2,
      'two sellers discovered',
    );
    openai = new OpenAI({ apiKey: 'x', baseURL: `${buyer.url}/v1`, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await buyer?.stop();
    await small?.stop();
    await big?.stop();
    await bootstrap?.stop();
    await cheapImages?.close();
    await dearImages?.close();
    await video?.close();
    await otherVideo?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists media models with unit prices by type', async () => {
    const images = (await (await fetch(`${buyer.url}/v1/models?type=images`)).json()) as {
      data: Array<{
        id: string;
        type: string;
        peers: Array<{ peerId: string; prices: { imageUsd?: number } }>;
      }>;
    };
    expect(images.data.map((m) => m.id)).toEqual(['gpt-image-1']);
    expect(images.data[0]!.peers.map((p) => [p.peerId, p.prices.imageUsd])).toEqual([
      [small.node.peerId, 0.02],
      [big.node.peerId, 0.05],
    ]);
    const videos = (await (await fetch(`${buyer.url}/v1/models?type=videos`)).json()) as {
      data: Array<{ id: string; type: string; peers: Array<{ prices: { videoUsd?: number } }> }>;
    };
    expect(videos.data.every((m) => m.type === 'video')).toBe(true);
    expect(
      videos.data.find((m) => m.id === 'kling-2')!.peers.map((p) => p.prices.videoUsd),
    ).toEqual([0.4, 0.5]);
    const decisions = (await (await fetch(`${buyer.url}/v1/models?type=decisions`)).json()) as {
      data: Array<{ id: string }>;
    };
    expect(decisions.data.map((m) => m.id)).toEqual(['judge-1']);
  });

  it('answers images and videos with the 15 x-svc headers of a non-streaming answer (spec 4.5)', async () => {
    const image = await post('/v1/images/generations', {
      model: 'gpt-image-1',
      prompt: 'a red square',
      n: 2,
    });
    expect(image.status).toBe(200);
    const queued = await post('/api/v1/video/queue', {
      model: `${small.node.peerId}@kling-2`,
      prompt: 'a cat',
      duration: '5s',
    });
    const { queue_id } = (await queued.json()) as { queue_id: string };
    let video = await post('/api/v1/video/retrieve', { model: 'kling-2', queue_id });
    while (!video.headers.get('content-type')?.startsWith('video/')) {
      video = await post('/api/v1/video/retrieve', { model: 'kling-2', queue_id });
    }
    for (const answer of [image, video]) {
      for (const name of SPEC_HEADERS) expect(answer.headers.get(name), name).not.toBeNull();
      await answer.arrayBuffer();
    }
    expect(image.headers.get('x-svc-output-tokens')).toBe('2');
    expect(image.headers.get('x-svc-peer-reputation')).toBe('80');
    expect(video.headers.get('x-svc-output-tokens')).toBe('1');
    expect(video.headers.get('x-svc-estimated-cost-usd')).toBe('0.500000');
  });

  it('routes image generation to the cheapest per-image seller and bills per image', async () => {
    const before = cheapImages.requests.length;
    const { data, response } = await openai.images
      .generate({ model: 'gpt-image-1', prompt: 'a red square', n: 2 })
      .withResponse();
    expect(data.data).toHaveLength(2);
    expect(data.data![0]!.b64_json).toBeTruthy();
    expect(response.headers.get('x-svc-peer-id')).toBe(small.node.peerId);
    expect(response.headers.get('x-svc-image-usd')).toBe('0.02');
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe('0.040000');
    const sent = cheapImages.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect((sent[0]!.body as { model: string }).model).toBe('gpt-image-1-upstream');
    const record = (await (
      await fetch(`${buyer.url}/_svc/requests/${response.headers.get('x-svc-request-id')}`)
    ).json()) as { costUsd: string; peerId: string; completed: boolean };
    expect(record).toMatchObject({
      costUsd: '0.040000',
      peerId: small.node.peerId,
      completed: true,
      usage: { outputTokens: 2 },
    });
  });

  it('takes :floor, sort and max_price on a media route and forwards none of them', async () => {
    const post = (body: Record<string, unknown>) =>
      fetch(`${buyer.url}/v1/images/generations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'a red square', n: 1, ...body }),
      });
    const before = cheapImages.requests.length;
    const response = await post({
      model: 'gpt-image-1:floor',
      sort: 'latency',
      max_price: { image: 0.02 },
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(response.headers.get('x-svc-peer-id')).toBe(small.node.peerId);
    const sent = cheapImages.requests.slice(before)[0]!.body as Record<string, unknown>;
    expect(sent.model).toBe('gpt-image-1-upstream');
    expect('sort' in sent || 'max_price' in sent).toBe(false);
    const tooCheap = await post({ model: 'gpt-image-1', max_price: { image: 0.01 } });
    expect(tooCheap.status).toBe(502);
    await tooCheap.arrayBuffer();
  });

  it('passes url responses through and honours a model-prefix pin', async () => {
    const { data, response } = await openai.images
      .generate({ model: `${big.node.peerId}@gpt-image-1`, prompt: 'x', response_format: 'url' })
      .withResponse();
    expect(data.data![0]!.url).toMatch(/^http:\/\/127\.0\.0\.1\/fake-images\/0\.png$/);
    expect(response.headers.get('x-svc-peer-id')).toBe(big.node.peerId);
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe('0.050000');
  });

  it('forwards a multipart edit byte for byte to the seller pinned by x-svc-pin-peer', async () => {
    const image = Buffer.alloc(100 * 1024);
    for (let i = 0; i < image.length; i++) image[i] = (i * 7 + 13) % 256;
    const before = dearImages.requests.length;
    const form = new FormData();
    form.append('model', 'gpt-image-1');
    form.append('prompt', 'make it blue');
    form.append('n', '2');
    form.append('image', new Blob([image], { type: 'image/png' }), 'in.png');
    const response = await fetch(`${buyer.url}/v1/images/edits`, {
      method: 'POST',
      headers: { 'x-svc-pin-peer': big.node.peerId },
      body: form,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(big.node.peerId);
    // The fake upstream answers one image for a multipart edit: billed one, not the two asked.
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe('0.050000');
    const arrived = dearImages.requests.slice(before);
    expect(arrived).toHaveLength(1);
    expect(arrived[0]!.path).toBe('/v1/images/edits');
    const raw = arrived[0]!.rawBody;
    expect(raw.includes(image)).toBe(true);
    expect(raw.toString('latin1')).toContain('gpt-image-1-upstream');
    expect(String(arrived[0]!.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
  });

  it('works with the official SDK edit call too, and refuses a pin in the multipart model', async () => {
    const file = await toFile(Buffer.from('tiny png bytes'), 'a.png', { type: 'image/png' });
    const { response } = await openai.images
      .edit({ model: 'gpt-image-1', prompt: 'p', image: file })
      .withResponse();
    expect(response.headers.get('x-svc-peer-id')).toBe(small.node.peerId);
    const error = await openai.images
      .edit({ model: `${big.node.peerId}@gpt-image-1`, prompt: 'p', image: file })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(
      'x-svc-pin-peer',
    );
  });

  it('answers 413 upload_body_too_large above the seller upload limit', async () => {
    const form = new FormData();
    form.append('model', 'gpt-image-1');
    form.append('prompt', 'p');
    form.append('image', new Blob([Buffer.alloc(100 * 1024, 1)]), 'a.png');
    const response = await fetch(`${buyer.url}/v1/images/edits`, {
      method: 'POST',
      headers: { 'x-svc-pin-peer': small.node.peerId },
      body: form,
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'upload_body_too_large',
    );
    const unpinned = new FormData();
    unpinned.append('model', 'gpt-image-1');
    unpinned.append('image', new Blob([Buffer.alloc(2 * 1024 * 1024, 1)]), 'a.png');
    const tooBig = await fetch(`${buyer.url}/v1/images/edits`, { method: 'POST', body: unpinned });
    expect(tooBig.status).toBe(413);
  });

  it('queues a video, reports pending, then delivers the mp4 from the same seller', async () => {
    const start = video.requests.length;
    const queued = await post('/api/v1/video/queue', {
      model: `${small.node.peerId}@kling-2`,
      prompt: 'a cat surfing',
      duration: '5s',
    });
    expect(queued.status).toBe(200);
    const job = (await queued.json()) as { queue_id: string };
    expect(job.queue_id).toMatch(/^job_/);
    expect(queued.headers.get('x-svc-estimated-cost-usd')).toBe('0.000000');
    const queueRequest = video.requests.at(-1)!;
    expect(queueRequest).toMatchObject({
      path: '/api/v1/video/queue',
      body: { model: 'kling-2', duration: '5s' },
    });

    const pending = await post('/api/v1/video/retrieve', {
      model: `${small.node.peerId}@kling-2`,
      queue_id: job.queue_id,
    });
    expect(pending.status).toBe(200);
    expect(pending.headers.get('content-type')).toContain('application/json');
    expect(await pending.json()).toMatchObject({ queue_id: job.queue_id, status: 'in_progress' });
    expect(pending.headers.get('x-svc-estimated-cost-usd')).toBe('0.000000');

    const done = await post('/api/v1/video/retrieve', { model: 'kling-2', queue_id: job.queue_id });
    expect(done.status).toBe(200);
    expect(done.headers.get('content-type')).toBe('video/mp4');
    expect(done.headers.get('x-svc-peer-id')).toBe(small.node.peerId);
    expect(Buffer.from(await done.arrayBuffer()).equals(TINY_MP4)).toBe(true);
    expect(done.headers.get('x-svc-estimated-cost-usd')).toBe('0.500000');
    const retrieves = video.requests
      .slice(start)
      .filter((r) => r.path === '/api/v1/video/retrieve');
    expect(
      retrieves.every((r) => (r.body as { queue_id?: unknown }).queue_id === job.queue_id),
    ).toBe(true);
    // The cheaper seller of kling-2 never saw the job.
    expect(otherVideo.requests).toHaveLength(0);
  });

  it('runs the second video format with the provider endpoint id as model', async () => {
    const model = 'fal-ai/kling-video/v2/master/text-to-video';
    const queued = await post('/fal/v1/video/queue', { model, prompt: 'waves' });
    expect(queued.status).toBe(200);
    const { queue_id } = (await queued.json()) as { queue_id: string };
    expect(video.requests.at(-1)!.path).toBe('/fal/v1/video/queue');
    await post('/fal/v1/video/retrieve', { model, queue_id });
    const done = await post('/fal/v1/video/retrieve', { model, queue_id });
    expect(done.headers.get('content-type')).toBe('video/mp4');
    // A queue_id of the other format is unknown here.
    const unknown = await post('/api/v1/video/retrieve', { model, queue_id });
    expect(unknown.status).toBe(404);
  });

  it('refuses a video priced above 5.00 USD, naming the price', async () => {
    const before = video.requests.length;
    const response = await post('/api/v1/video/queue', {
      model: `${small.node.peerId}@sora-pro`,
      prompt: 'p',
      duration: '4s',
    });
    expect(response.status).toBe(402);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('video_price_above_ceiling');
    expect(body.error.message).toContain('6.000000 USD');
    expect(video.requests.length).toBe(before);
    // Unpinned: every seller of the model is above the ceiling.
    const automatic = await post('/api/v1/video/queue', { model: 'sora-pro', prompt: 'p' });
    expect(automatic.status).toBe(402);
    expect(((await automatic.json()) as { error: { message: string } }).error.message).toContain(
      '6.000000 USD',
    );
    const badDuration = await post('/api/v1/video/queue', {
      model: 'kling-2',
      prompt: 'p',
      duration: '5 seconds',
    });
    expect(badDuration.status).toBe(400);
  });

  it('answers a systemone decision question', async () => {
    const response = await post('/v1/systemone', {
      model: 'judge-1',
      question: 'Is the sky blue or green on a clear day?',
      options: ['green', 'blue sky'],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(small.node.peerId);
    expect(await response.json()).toMatchObject({ model: 'judge-1', answer: 'blue sky' });
    const invalid = await post('/v1/systemone', { model: 'judge-1' });
    expect(invalid.status).toBe(400);
  });

  it('answers 400 model_type_mismatch when a model is sent to the wrong route', async () => {
    const onImages = await post('/v1/images/generations', { model: 'demo-chat', prompt: 'p' });
    expect(onImages.status).toBe(400);
    expect(((await onImages.json()) as { error: { code: string } }).error.code).toBe(
      'model_type_mismatch',
    );
    const onChat = await post('/v1/chat/completions', {
      model: 'gpt-image-1',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(onChat.status).toBe(400);
    const onDecisions = await post('/v1/systemone', { model: 'kling-2', question: 'q' });
    expect(onDecisions.status).toBe(400);
  });
  it('honours the gateway max-cost and routing-policy headers on image routes', async () => {
    mkdirSync(join(dataDir, 'gateway'), { recursive: true });
    writeFileSync(join(dataDir, 'gateway', 'control.secret'), 'ab'.repeat(32), { mode: 0o600 });
    const auth = { 'x-svc-gateway-auth': 'ab'.repeat(32) };
    const policy = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');
    const capped = await post(
      '/v1/images/generations',
      { model: 'gpt-image-1', prompt: 'p', n: 2 },
      { ...auth, 'x-svc-max-cost-usd': '0.03' },
    );
    expect(capped.status).toBe(402);
    expect(((await capped.json()) as { error: { code: string } }).error.code).toBe(
      'spend_limit_reached',
    );
    const cheapOnly = await post(
      '/v1/images/generations',
      { model: 'gpt-image-1', prompt: 'p' },
      { ...auth, 'x-svc-routing-policy': policy({ maxPricing: { imageUsd: 0.01 } }) },
    );
    expect(cheapOnly.status).toBe(502);
    expect(((await cheapOnly.json()) as { error: { message: string } }).error.message).toContain(
      'image price above cap',
    );
    // Without the secret the same headers are ignored.
    const ignored = await post(
      '/v1/images/generations',
      { model: 'gpt-image-1', prompt: 'p' },
      { 'x-svc-routing-policy': policy({ maxPricing: { imageUsd: 0.01 } }) },
    );
    expect(ignored.status).toBe(200);
  });

  // Last: the failure leaves the cheap seller cooling down for later automatic requests.
  it('fails over from a cheaper image seller whose upstream fails, never for a pin', async () => {
    cheapImages.configure({ fault: 'status500' });
    try {
      const pinned = await post(
        '/v1/images/generations',
        { model: 'gpt-image-1', prompt: 'p' },
        { 'x-svc-pin-peer': small.node.peerId },
      );
      expect(pinned.status).toBeGreaterThanOrEqual(500);
      const { response } = await openai.images
        .generate({ model: 'gpt-image-1', prompt: 'p' })
        .withResponse();
      expect(response.headers.get('x-svc-peer-id')).toBe(big.node.peerId);
      expect(response.headers.get('x-svc-attempts')).toMatch(
        new RegExp(`^${small.node.peerId}@gpt-image-1:5\\d\\d$`),
      );
    } finally {
      cheapImages.configure({});
    }
  });
});
