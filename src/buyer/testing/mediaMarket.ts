/**
 * Two real sellers of media on loopback libp2p behind fake images and video upstreams, and a
 * buyer, for the media route tests (src/buyer/media/media.test.ts, media.video.test.ts):
 * "small" sells cheap images (64 KiB uploads), two video formats, decisions and a text demo
 * model; "big" dearer images (1 MiB uploads) and a cheaper kling-2. `mediaMarket()` starts it
 * before the calling test file's tests and stops it after.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import type { SellerConfig } from '../../config/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
} from '../../network/testing/loopback.js';
import { startSeller } from '../../seller/index.js';
import { type FakeUpstream, startFakeUpstream } from '../../seller/testing/index.js';
import { startUnpaidBuyer } from './discovery.js';

const FREE = { inputUsdPerMillion: 0, outputUsdPerMillion: 0 };

/** The headers spec 4.5 gives every non-streaming answer. */
export const SPEC_HEADERS = [
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

type MediaMarket = Awaited<ReturnType<typeof startMediaMarket>>;

/** The market of the calling test file: its fields are there once its `beforeAll` has run. */
export function mediaMarket(): MediaMarket {
  const market = {} as MediaMarket;
  beforeAll(async () => {
    Object.assign(market, await startMediaMarket());
  }, 90_000);
  afterAll(async () => {
    await market.stop?.();
  });
  return market;
}

async function startMediaMarket() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-buyer-media-'));
  const bootstrap = await startLoopbackNode('bootstrap');
  const network = loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] });
  const cheapImages = await startFakeUpstream();
  const dearImages = await startFakeUpstream();
  const video = await startFakeUpstream({ videoPollsUntilDone: 1 });
  const otherVideo = await startFakeUpstream({ videoPollsUntilDone: 0 });
  // "small": cheap images, 64 KiB upload limit, video, decisions and a text demo model.
  const small = await startSeller({
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
  const big = await startSeller({
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
  const buyer = await startUnpaidBuyer(network, dataDir, 2);
  const openai = new OpenAI({ apiKey: 'x', baseURL: `${buyer.url}/v1`, maxRetries: 0 });
  const post = (path: string, payload: unknown, headers: Record<string, string> = {}) =>
    fetch(`${buyer.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(payload),
    });
  const stop = async () => {
    await buyer.stop();
    await small.stop();
    await big.stop();
    await bootstrap.stop();
    for (const upstream of [cheapImages, dearImages, video, otherVideo]) await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return {
    dataDir,
    cheapImages,
    dearImages,
    video,
    otherVideo,
    small,
    big,
    buyer,
    openai,
    post,
    stop,
  };
}
