/**
 * Image routes end to end: the buyer on real libp2p with real seller nodes relaying to fake
 * OpenAI-images upstreams: media listing, the answer headers, per-image routing and billing,
 * multipart edits pinned by header, upload limits, gateway headers and failover.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { mediaMarket, SPEC_HEADERS } from '../testing/mediaMarket.js';

const market = mediaMarket();

describe('image routes over libp2p with real sellers', () => {
  it('lists media models with unit prices by type', async () => {
    const images = (await (await fetch(`${market.buyer.url}/v1/models?type=images`)).json()) as {
      data: Array<{
        id: string;
        type: string;
        peers: Array<{ peerId: string; prices: { imageUsd?: number } }>;
      }>;
    };
    expect(images.data.map((m) => m.id)).toEqual(['gpt-image-1']);
    expect(images.data[0]!.peers.map((p) => [p.peerId, p.prices.imageUsd])).toEqual([
      [market.small.node.peerId, 0.02],
      [market.big.node.peerId, 0.05],
    ]);
    const videos = (await (await fetch(`${market.buyer.url}/v1/models?type=videos`)).json()) as {
      data: Array<{ id: string; type: string; peers: Array<{ prices: { videoUsd?: number } }> }>;
    };
    expect(videos.data.every((m) => m.type === 'video')).toBe(true);
    expect(
      videos.data.find((m) => m.id === 'kling-2')!.peers.map((p) => p.prices.videoUsd),
    ).toEqual([0.4, 0.5]);
    const decisions = (await (
      await fetch(`${market.buyer.url}/v1/models?type=decisions`)
    ).json()) as {
      data: Array<{ id: string }>;
    };
    expect(decisions.data.map((m) => m.id)).toEqual(['judge-1']);
  });

  it('answers images and videos with the 15 x-svc headers of a non-streaming answer (spec 4.5)', async () => {
    const image = await market.post('/v1/images/generations', {
      model: 'gpt-image-1',
      prompt: 'a red square',
      n: 2,
    });
    expect(image.status).toBe(200);
    const queued = await market.post('/api/v1/video/queue', {
      model: `${market.small.node.peerId}@kling-2`,
      prompt: 'a cat',
      duration: '5s',
    });
    const { queue_id } = (await queued.json()) as { queue_id: string };
    let video = await market.post('/api/v1/video/retrieve', { model: 'kling-2', queue_id });
    while (!video.headers.get('content-type')?.startsWith('video/')) {
      video = await market.post('/api/v1/video/retrieve', { model: 'kling-2', queue_id });
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
    const before = market.cheapImages.requests.length;
    const { data, response } = await market.openai.images
      .generate({ model: 'gpt-image-1', prompt: 'a red square', n: 2 })
      .withResponse();
    expect(data.data).toHaveLength(2);
    expect(data.data![0]!.b64_json).toBeTruthy();
    expect(response.headers.get('x-svc-peer-id')).toBe(market.small.node.peerId);
    expect(response.headers.get('x-svc-image-usd')).toBe('0.02');
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe('0.040000');
    const sent = market.cheapImages.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect((sent[0]!.body as { model: string }).model).toBe('gpt-image-1-upstream');
    const record = (await (
      await fetch(`${market.buyer.url}/_svc/requests/${response.headers.get('x-svc-request-id')}`)
    ).json()) as { costUsd: string; peerId: string; completed: boolean };
    expect(record).toMatchObject({
      costUsd: '0.040000',
      peerId: market.small.node.peerId,
      completed: true,
      usage: { outputTokens: 2 },
    });
  });

  it('takes :floor, sort and max_price on a media route and forwards none of them', async () => {
    const post = (body: Record<string, unknown>) =>
      fetch(`${market.buyer.url}/v1/images/generations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'a red square', n: 1, ...body }),
      });
    const before = market.cheapImages.requests.length;
    const response = await post({
      model: 'gpt-image-1:floor',
      sort: 'latency',
      max_price: { image: 0.02 },
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(response.headers.get('x-svc-peer-id')).toBe(market.small.node.peerId);
    const sent = market.cheapImages.requests.slice(before)[0]!.body as Record<string, unknown>;
    expect(sent.model).toBe('gpt-image-1-upstream');
    expect('sort' in sent || 'max_price' in sent).toBe(false);
    const tooCheap = await post({ model: 'gpt-image-1', max_price: { image: 0.01 } });
    expect(tooCheap.status).toBe(502);
    await tooCheap.arrayBuffer();
  });

  it('passes url responses through and honours a model-prefix pin', async () => {
    const { data, response } = await market.openai.images
      .generate({
        model: `${market.big.node.peerId}@gpt-image-1`,
        prompt: 'x',
        response_format: 'url',
      })
      .withResponse();
    expect(data.data![0]!.url).toMatch(/^http:\/\/127\.0\.0\.1\/fake-images\/0\.png$/);
    expect(response.headers.get('x-svc-peer-id')).toBe(market.big.node.peerId);
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe('0.050000');
  });

  it('forwards a multipart edit byte for byte to the seller pinned by x-svc-pin-peer', async () => {
    const image = Buffer.alloc(100 * 1024);
    for (let i = 0; i < image.length; i++) image[i] = (i * 7 + 13) % 256;
    const before = market.dearImages.requests.length;
    const form = new FormData();
    form.append('model', 'gpt-image-1');
    form.append('prompt', 'make it blue');
    form.append('n', '2');
    form.append('image', new Blob([image], { type: 'image/png' }), 'in.png');
    const response = await fetch(`${market.buyer.url}/v1/images/edits`, {
      method: 'POST',
      headers: { 'x-svc-pin-peer': market.big.node.peerId },
      body: form,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-peer-id')).toBe(market.big.node.peerId);
    // The fake upstream answers one image for a multipart edit: billed one, not the two asked.
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe('0.050000');
    const arrived = market.dearImages.requests.slice(before);
    expect(arrived).toHaveLength(1);
    expect(arrived[0]!.path).toBe('/v1/images/edits');
    const raw = arrived[0]!.rawBody;
    expect(raw.includes(image)).toBe(true);
    expect(raw.toString('latin1')).toContain('gpt-image-1-upstream');
    expect(String(arrived[0]!.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
  });

  it('works with the official SDK edit call too, and refuses a pin in the multipart model', async () => {
    const file = await toFile(Buffer.from('tiny png bytes'), 'a.png', { type: 'image/png' });
    const { response } = await market.openai.images
      .edit({ model: 'gpt-image-1', prompt: 'p', image: file })
      .withResponse();
    expect(response.headers.get('x-svc-peer-id')).toBe(market.small.node.peerId);
    const error = await market.openai.images
      .edit({ model: `${market.big.node.peerId}@gpt-image-1`, prompt: 'p', image: file })
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
    const response = await fetch(`${market.buyer.url}/v1/images/edits`, {
      method: 'POST',
      headers: { 'x-svc-pin-peer': market.small.node.peerId },
      body: form,
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'upload_body_too_large',
    );
    const unpinned = new FormData();
    unpinned.append('model', 'gpt-image-1');
    unpinned.append('image', new Blob([Buffer.alloc(2 * 1024 * 1024, 1)]), 'a.png');
    const tooBig = await fetch(`${market.buyer.url}/v1/images/edits`, {
      method: 'POST',
      body: unpinned,
    });
    expect(tooBig.status).toBe(413);
  });

  it('honours the gateway max-cost and routing-policy headers on image routes', async () => {
    mkdirSync(join(market.dataDir, 'gateway'), { recursive: true });
    writeFileSync(join(market.dataDir, 'gateway', 'control.secret'), 'ab'.repeat(32), {
      mode: 0o600,
    });
    const auth = { 'x-svc-gateway-auth': 'ab'.repeat(32) };
    const policy = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');
    const capped = await market.post(
      '/v1/images/generations',
      { model: 'gpt-image-1', prompt: 'p', n: 2 },
      { ...auth, 'x-svc-max-cost-usd': '0.03' },
    );
    expect(capped.status).toBe(402);
    expect(((await capped.json()) as { error: { code: string } }).error.code).toBe(
      'spend_limit_reached',
    );
    const cheapOnly = await market.post(
      '/v1/images/generations',
      { model: 'gpt-image-1', prompt: 'p' },
      { ...auth, 'x-svc-routing-policy': policy({ maxPricing: { imageUsd: 0.01 } }) },
    );
    expect(cheapOnly.status).toBe(502);
    expect(((await cheapOnly.json()) as { error: { message: string } }).error.message).toContain(
      'image price above cap',
    );
    // Without the secret the same headers are ignored.
    const ignored = await market.post(
      '/v1/images/generations',
      { model: 'gpt-image-1', prompt: 'p' },
      { 'x-svc-routing-policy': policy({ maxPricing: { imageUsd: 0.01 } }) },
    );
    expect(ignored.status).toBe(200);
  });

  // Last: the failure leaves the cheap seller cooling down for later automatic requests.
  it('fails over from a cheaper image seller whose upstream fails, never for a pin', async () => {
    market.cheapImages.configure({ fault: 'status500' });
    try {
      const pinned = await market.post(
        '/v1/images/generations',
        { model: 'gpt-image-1', prompt: 'p' },
        { 'x-svc-pin-peer': market.small.node.peerId },
      );
      expect(pinned.status).toBeGreaterThanOrEqual(500);
      const { response } = await market.openai.images
        .generate({ model: 'gpt-image-1', prompt: 'p' })
        .withResponse();
      expect(response.headers.get('x-svc-peer-id')).toBe(market.big.node.peerId);
      expect(response.headers.get('x-svc-attempts')).toMatch(
        new RegExp(`^${market.small.node.peerId}@gpt-image-1:5\\d\\d$`),
      );
    } finally {
      market.cheapImages.configure({});
    }
  });
});
