/** The seller's media handling against fake upstreams: per-image and per-video billing, demo decisions. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SellerConfig } from '../../config/index.js';
import type { PeerId } from '../../identity/index.js';
import { silentLogger } from '../../log/index.js';
import type { MicroUsd } from '../../money/index.js';
import type { InboundRequest, OutboundReply } from '../../network/index.js';
import { createSellerHandler } from '../handler.js';
import type { SellerPayments } from '../payments.js';
import { runtimeProviders } from '../startSeller.js';
import { type FakeUpstream, startFakeUpstream, TINY_MP4 } from '../testing/fakeUpstreams.js';

const SELLER = '0x1111111111111111111111111111111111111111' as PeerId;
const BUYER = '0x2222222222222222222222222222222222222222' as PeerId;
const FREE = { inputUsdPerMillion: 0, outputUsdPerMillion: 0 };

async function bodyOf(reply: OutboundReply): Promise<Buffer> {
  if (reply.body instanceof Uint8Array) return Buffer.from(reply.body);
  const chunks: Uint8Array[] = [];
  for await (const chunk of reply.body ?? []) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('seller media handling', () => {
  let images: FakeUpstream;
  let video: FakeUpstream;
  const admitted: MicroUsd[] = [];
  const recorded: MicroUsd[] = [];
  let handle: (request: InboundRequest) => Promise<OutboundReply>;
  let providers: ReturnType<typeof runtimeProviders>;

  const send = (path: string, body: unknown) =>
    handle({
      peerId: BUYER,
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json' },
      body: new TextEncoder().encode(JSON.stringify(body)),
      signal: new AbortController().signal,
    });

  beforeAll(async () => {
    images = await startFakeUpstream();
    video = await startFakeUpstream({ videoPollsUntilDone: 1 });
    const seller: SellerConfig = {
      displayName: 's',
      uploadLimitBytes: 1024 * 1024,
      providers: [
        {
          type: 'openai-images',
          baseUrl: images.baseUrl,
          services: { 'img-1': { categories: [], imageUsd: 0.02 } },
          defaultPricing: FREE,
          maxConcurrency: 2,
        },
        {
          type: 'video',
          baseUrl: video.url,
          services: { 'vid-1': { categories: [], videoUsd: 0.5 } },
          defaultPricing: FREE,
          maxConcurrency: 2,
        },
        {
          type: 'systemone',
          services: { 'judge-1': { categories: [] } },
          defaultPricing: FREE,
          maxConcurrency: 2,
        },
      ],
    };
    providers = runtimeProviders(seller, {});
    const payments: SellerPayments = {
      admit: async (_payment, _offer, maxCost) => {
        admitted.push(maxCost);
      },
      record: async (_id, _usage, cost) => {
        recorded.push(cost);
      },
    };
    handle = createSellerHandler({
      sellerPeerId: SELLER,
      providers: () => providers,
      payments,
      onLoadChange: () => {},
      logger: silentLogger(),
    });
  });

  afterAll(async () => {
    await images?.close();
    await video?.close();
  });

  it('bills n images at imageUsd each', async () => {
    admitted.length = 0;
    recorded.length = 0;
    const reply = await send('/v1/images/generations', { model: 'img-1', prompt: 'p', n: 3 });
    expect(reply.status).toBe(200);
    const json = JSON.parse((await bodyOf(reply)).toString('utf8')) as { data: unknown[] };
    expect(json.data).toHaveLength(3);
    const trailer = await reply.trailer!();
    expect(trailer).toMatchObject({ costMicroUsd: '60000', usage: { outputTokens: 3000 } });
    expect(admitted).toEqual([60_000n]);
    expect(recorded).toEqual([60_000n]);
    const tooMany = await send('/v1/images/generations', { model: 'img-1', prompt: 'p', n: 11 });
    expect(tooMany.status).toBe(400);
  });

  it('bills a video once, when the mp4 is delivered', async () => {
    admitted.length = 0;
    recorded.length = 0;
    const queued = await send('/api/v1/video/queue', { model: 'vid-1', prompt: 'p' });
    const { queue_id } = JSON.parse((await bodyOf(queued)).toString('utf8')) as {
      queue_id: string;
    };
    expect(await queued.trailer!()).toEqual({});
    expect(admitted).toEqual([]);
    const pending = await send('/api/v1/video/retrieve', { model: 'vid-1', queue_id });
    expect(pending.headers['content-type']).toContain('application/json');
    expect(await pending.trailer!()).toEqual({});
    const done = await send('/api/v1/video/retrieve', { model: 'vid-1', queue_id });
    expect(done.headers['content-type']).toBe('video/mp4');
    expect((await bodyOf(done)).equals(TINY_MP4)).toBe(true);
    expect(await done.trailer!()).toMatchObject({ costMicroUsd: '500000' });
    const again = await send('/api/v1/video/retrieve', { model: 'vid-1', queue_id });
    expect(again.headers['content-type']).toBe('video/mp4');
    expect(await again.trailer!()).toEqual({});
    // The pending poll and the second download are recorded at zero (releasing the lock).
    expect(recorded).toEqual([0n, 500_000n, 0n]);
    expect(admitted).toEqual([500_000n, 500_000n, 500_000n]);
  });

  it("bills no second download when the seller's payments already billed the job (restart)", async () => {
    // Payments that persist bill-once keys (the paid seller's SQLite store) outlive the handler.
    const billedOnce = new Set<string>();
    const costs: MicroUsd[] = [];
    const persistent: SellerPayments = {
      admit: async () => {},
      record: async (_id, _usage, cost) => {
        costs.push(cost);
      },
      claimOnce: (key) => !billedOnce.has(key) && Boolean(billedOnce.add(key)),
    };
    const handlerWith = () =>
      createSellerHandler({
        sellerPeerId: SELLER,
        providers: () => providers,
        payments: persistent,
        onLoadChange: () => {},
        logger: silentLogger(),
      });
    const retrieve = (handler: typeof handle, queueId: string) =>
      handler({
        peerId: BUYER,
        method: 'POST',
        path: '/api/v1/video/retrieve',
        headers: { 'content-type': 'application/json' },
        body: new TextEncoder().encode(JSON.stringify({ model: 'vid-1', queue_id: queueId })),
        signal: new AbortController().signal,
      });
    const before = handlerWith();
    const queued = await send('/api/v1/video/queue', { model: 'vid-1', prompt: 'p' });
    const { queue_id } = JSON.parse((await bodyOf(queued)).toString('utf8')) as {
      queue_id: string;
    };
    await (await retrieve(before, queue_id)).trailer!(); // pending
    const delivered = await retrieve(before, queue_id);
    expect(delivered.headers['content-type']).toBe('video/mp4');
    expect(await delivered.trailer!()).toMatchObject({ costMicroUsd: '500000' });
    const after = handlerWith(); // the seller process restarted
    const again = await retrieve(after, queue_id);
    expect(again.headers['content-type']).toBe('video/mp4');
    expect(await again.trailer!()).toEqual({});
    expect(costs).toEqual([0n, 500_000n, 0n]);
  });

  it('answers decisions from the demo and rejects malformed questions', async () => {
    const reply = await send('/v1/systemone', {
      model: 'judge-1',
      question: 'Which one is a fruit like an apple?',
      options: ['a rock', 'fruit: apple'],
    });
    expect(reply.status).toBe(200);
    expect(JSON.parse((await bodyOf(reply)).toString('utf8'))).toMatchObject({
      answer: 'fruit: apple',
      object: 'systemone.decision',
    });
    const bad = await send('/v1/systemone', { model: 'judge-1', options: ['one'] });
    expect(bad.status).toBe(400);
  });
});
