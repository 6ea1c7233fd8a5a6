/**
 * One real seller on loopback libp2p in front of a fake upstream that speaks every text and image
 * format (chat, messages, responses, images, demo), and a buyer's network to reach it, for the
 * seller's own tests (src/seller/seller.test.ts, seller.faults.test.ts). `sellerMarket()` starts
 * it before the calling test file's tests and stops it after.
 */
import { afterAll, beforeAll } from 'vitest';
import type { SellerConfig } from '../../config/index.js';
import { type SellerResponse, startBuyerNetwork } from '../../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from '../../network/testing/index.js';
import { startSeller } from '../startSeller.js';
import { type FakeUpstream, startFakeUpstream } from './fakeUpstreams.js';

const encoder = new TextEncoder();
export const PRICE = { inputUsdPerMillion: 2, outputUsdPerMillion: 8, cachedInputUsdPerMillion: 1 };
/** The upstream keys the seller is started with. */
export const SELLER_ENV = {
  FAKE_OPENAI_KEY: 'sk-seller-openai',
  FAKE_ANTHROPIC_KEY: 'sk-seller-anthropic',
};

/** The whole body of a seller's answer, as text. */
export async function text(response: SellerResponse): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

export function sellerConfig(
  upstream: FakeUpstream,
  overrides: Partial<SellerConfig> = {},
): SellerConfig {
  return {
    displayName: 'test seller',
    uploadLimitBytes: 64 * 1024,
    providers: [
      {
        type: 'openai-chat',
        name: 'openai',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_OPENAI_KEY',
        services: { 'gpt-test': { upstreamModel: 'gpt-upstream-1', categories: ['chat'] } },
        defaultPricing: PRICE,
        maxConcurrency: 1,
      },
      {
        type: 'anthropic-messages',
        name: 'anthropic',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_ANTHROPIC_KEY',
        services: { 'claude-test': { upstreamModel: 'claude-upstream-1', categories: [] } },
        defaultPricing: PRICE,
        maxConcurrency: 4,
      },
      {
        type: 'openai-responses',
        name: 'openai-responses',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_OPENAI_KEY',
        services: { 'resp-test': { categories: [] } },
        defaultPricing: PRICE,
        maxConcurrency: 4,
      },
      {
        type: 'openai-images',
        name: 'images',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_OPENAI_KEY',
        services: { 'image-test': { upstreamModel: 'gpt-image-upstream', categories: ['image'] } },
        defaultPricing: PRICE,
        maxConcurrency: 2,
      },
      {
        type: 'demo',
        services: { 'demo-chat': { categories: ['demo'] } },
        defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
        maxConcurrency: 8,
      },
    ],
    ...overrides,
  };
}

type SellerMarket = Awaited<ReturnType<typeof startSellerMarket>>;

/** The market of the calling test file: its fields are there once its `beforeAll` has run. */
export function sellerMarket(): SellerMarket {
  const market = {} as SellerMarket;
  beforeAll(async () => {
    Object.assign(market, await startSellerMarket());
  }, 60_000);
  afterAll(async () => {
    await market.stop?.();
  });
  return market;
}

async function startSellerMarket() {
  const upstream = await startFakeUpstream({ text: 'alpha beta gamma', requireApiKey: undefined });
  const bootstrap = await startLoopbackNode('bootstrap');
  const network = loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] });
  const seller = await startSeller({
    identity: randomIdentity(),
    seller: sellerConfig(upstream),
    network,
    env: SELLER_ENV,
  });
  const buyerNetwork = await startBuyerNetwork({ identity: randomIdentity(), config: network });
  const { directory, transport } = buyerNetwork;
  await waitFor(
    async () => {
      await directory.refresh();
      return directory.get(seller.node.peerId)?.reachable;
    },
    30_000,
    'seller discovery',
  );
  /** A JSON POST to the seller over the buyer's network. */
  const post = (
    path: string,
    body: unknown,
    extra: Record<string, string> = {},
    signal?: AbortSignal,
  ) =>
    transport.request(seller.node.peerId, {
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', ...extra },
      body: encoder.encode(JSON.stringify(body)),
      ...(signal ? { signal } : {}),
    });
  const stop = async () => {
    await buyerNetwork.stop();
    await seller.stop();
    await bootstrap.stop();
    await upstream.close();
  };
  return { upstream, seller, buyerNetwork, directory, transport, post, stop };
}
