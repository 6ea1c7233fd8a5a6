/**
 * The buyer on real libp2p nodes on loopback with real seller nodes (src/seller) relaying to
 * fake upstream APIs: discovery, ranking, failover, pins, streams, translation, cancel.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SellerConfig } from '../config/index.js';
import type { SvcNode } from '../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
} from '../network/testing/loopback.js';
import { type SellerHandle, startSeller } from '../seller/index.js';
import { type FakeUpstream, startFakeUpstream } from '../seller/testing/index.js';
import type { RunningBuyerNode } from './runBuyerNode.js';
import { startUnpaidBuyer } from './testing/discovery.js';

function chatSeller(
  upstream: FakeUpstream,
  serviceId: string,
  price: number,
  extra: SellerConfig['providers'][number]['services'] = {},
  cachedPrice?: number,
): SellerConfig {
  return {
    displayName: `seller ${serviceId}`,
    uploadLimitBytes: 1024 * 1024,
    providers: [
      {
        type: 'openai-chat',
        name: 'openai',
        baseUrl: upstream.baseUrl,
        services: { [serviceId]: { upstreamModel: 'gpt-4o-mini', categories: [] }, ...extra },
        defaultPricing: {
          inputUsdPerMillion: price,
          outputUsdPerMillion: price * 4,
          ...(cachedPrice === undefined ? {} : { cachedInputUsdPerMillion: cachedPrice }),
        },
        maxConcurrency: 8,
      },
    ],
  };
}

describe('buyer over libp2p with real sellers', () => {
  let bootstrap: SvcNode;
  let bad: FakeUpstream;
  let good: FakeUpstream;
  let cheapBroken: SellerHandle;
  let dearWorking: SellerHandle;
  let buyer: RunningBuyerNode;
  let dataDir: string;
  let openai: OpenAI;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-buyer-net-'));
    bootstrap = await startLoopbackNode('bootstrap');
    const network = loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] });
    bad = await startFakeUpstream({ fault: 'status500' });
    good = await startFakeUpstream({ text: 'served well' });
    cheapBroken = await startSeller({
      identity: randomIdentity(),
      seller: chatSeller(bad, 'gpt-4o-mini', 0.1),
      network,
    });
    dearWorking = await startSeller({
      identity: randomIdentity(),
      // Two names for one model (the dearer alias must not become a second offer), and a
      // cached-input price the other seller lacks (its effective reputation is halved).
      seller: chatSeller(
        good,
        'openai/gpt-4o-mini-2024-07-18',
        0.15,
        {
          'GPT-4o-mini': {
            upstreamModel: 'gpt-4o-mini',
            categories: [],
            pricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 4 },
          },
        },
        0.075,
      ),
      network,
    });
    buyer = await startUnpaidBuyer(network, dataDir, 2);
    openai = new OpenAI({ apiKey: 'x', baseURL: `${buyer.url}/v1`, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await buyer?.stop();
    await cheapBroken?.stop();
    await dearWorking?.stop();
    await bootstrap?.stop();
    await bad?.close();
    await good?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists one offer per seller in rank order, with the cached-price rule applied', async () => {
    const model = await openai.models.retrieve('gpt-4o-mini');
    const entry = model as unknown as {
      aliases: string[];
      peers: Array<{
        peerId: string;
        serviceId: string;
        reputationScore: number;
        effectiveReputationScore: number;
      }>;
    };
    expect(entry.peers.map((peer) => peer.peerId)).toEqual([
      cheapBroken.node.peerId,
      dearWorking.node.peerId,
    ]);
    expect(entry.peers[1]!.serviceId).toBe('openai/gpt-4o-mini-2024-07-18');
    expect(entry.aliases).toContain('GPT-4o-mini');
    expect(entry.peers[0]).toMatchObject({ reputationScore: 80, effectiveReputationScore: 40 });
    expect(entry.peers[1]).toMatchObject({ reputationScore: 80, effectiveReputationScore: 80 });
  });

  it('applies an authenticated gateway policy: block list, price caps, trust gate', async () => {
    mkdirSync(join(dataDir, 'gateway'), { recursive: true });
    writeFileSync(join(dataDir, 'gateway', 'control.secret'), 'cd'.repeat(32), { mode: 0o600 });
    const policy = (value: object) => ({
      'x-svc-gateway-auth': 'cd'.repeat(32),
      'x-svc-routing-policy': Buffer.from(JSON.stringify(value)).toString('base64url'),
    });
    const call = (headers: Record<string, string>) =>
      fetch(`${buyer.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        // A conversation of its own: affinity must not carry over to the tests below.
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'policy check' }],
        }),
      });
    const blocked = await call(policy({ blockedPeerIds: [cheapBroken.node.peerId] }));
    expect(blocked.status).toBe(200);
    expect(blocked.headers.get('x-svc-attempts')).toBe('none');
    const capped = await call(policy({ maxPricing: { outputUsdPerMillion: 0.5 } }));
    // Only the broken seller is under the cap: its failure is the answer, nobody else is tried.
    expect(capped.status).toBeGreaterThanOrEqual(500);
    expect(capped.headers.get('x-svc-attempts')).toMatch(
      new RegExp(`^${cheapBroken.node.peerId}@`),
    );
    const gated = await call(policy({ minTrustScore: 90 }));
    expect(gated.status).toBe(502);
    const body = (await gated.json()) as { error: { code: string; excluded: unknown[] } };
    expect(body.error.code).toBe('model_not_found');
    expect(body.error.excluded).toHaveLength(2);
    rmSync(join(dataDir, 'gateway'), { recursive: true, force: true });
  });

  it('answers an unknown model once, not retried by the official SDKs, naming GET /v1/models', async () => {
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    // Default retry settings: without x-should-retry: false both SDKs retry a 502 twice.
    const sdkOpenAi = new OpenAI({ apiKey: 'x', baseURL: `${buyer.url}/v1`, fetch: counting });
    const chatError = await sdkOpenAi.chat.completions
      .create({ model: 'gpt-4o-minj', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(chatError).toBeInstanceOf(OpenAI.APIError);
    const apiError = chatError as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(502);
    expect(apiError.headers?.get('x-should-retry')).toBe('false');
    expect(apiError.message).toMatch(/GET \/v1\/models/);
    expect((apiError.error as { didYouMean: string[] }).didYouMean).toContain('gpt-4o-mini');
    expect(calls).toBe(1);
    const sdkAnthropic = new Anthropic({ apiKey: 'x', baseURL: buyer.url, fetch: counting });
    const messagesError = await sdkAnthropic.messages
      .create({
        model: 'claude-opus-4-8[1m]',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .catch((error: unknown) => error);
    expect(messagesError).toBeInstanceOf(Anthropic.APIError);
    expect((messagesError as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    expect(String(messagesError)).toMatch(/GET \/v1\/models/);
    expect(calls).toBe(2);
  });

  it('fails over from the cheaper seller whose upstream fails to the next one', async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('served well');
    expect(response.headers.get('x-svc-peer-id')).toBe(dearWorking.node.peerId);
    expect(response.headers.get('x-svc-service')).toBe('openai/gpt-4o-mini-2024-07-18');
    expect(response.headers.get('x-svc-attempts')).toMatch(
      new RegExp(`^${cheapBroken.node.peerId}@gpt-4o-mini:5\\d\\d$`),
    );
    expect(response.headers.get('x-svc-token-source')).toBe('usage');
    expect(bad.requests.length).toBeGreaterThan(0);
    // The upstream saw the seller's key and model, never the client's credentials.
    expect(good.requests.at(-1)!.headers.authorization).not.toBe('Bearer x');
  });

  it('serves when every seller of the model is marked unreachable, and lists them again', async () => {
    // Marks are guesses from past dials and record fetches: a busy or restarting seller earns
    // one. With nobody else to ask, the buyer dials anyway rather than answer 502 at once.
    for (const seller of [cheapBroken, dearWorking]) {
      await buyer.node.libp2p.hangUp(seller.node.libp2pPeerId);
      buyer.directory.markUnreachable(seller.node.peerId, 'dial failed');
      expect(buyer.directory.get(seller.node.peerId)?.reachable).toBe(false);
    }
    const { data, response } = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('served well');
    expect(response.headers.get('x-svc-peer-id')).toBe(dearWorking.node.peerId);
    expect(buyer.directory.get(dearWorking.node.peerId)?.reachable).toBe(true);
  });

  it('never fails over a pin', async () => {
    const before = good.requests.length;
    const error = await openai.chat.completions
      .create({
        model: `0x${cheapBroken.node.peerId}@gpt-4o-mini`,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBeGreaterThanOrEqual(500);
    expect(good.requests.length).toBe(before);
  });

  it('streams through libp2p and ends with the svc-usage comment', async () => {
    const response = await fetch(`${buyer.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: `${dearWorking.node.peerId}@openai/gpt-4o-mini-2024-07-18`,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(response.headers.get('x-svc-peer-id')).toBe(dearWorking.node.peerId);
    const text = await response.text();
    expect(text).toContain('chat.completion.chunk');
    expect(text.trimEnd().split('\n').at(-1)).toMatch(
      /^: svc-usage \{"inputTokens":12,"cachedInputTokens":4,"outputTokens":\d+,"costUsd":"0\.\d{6}"\}$/,
    );
  });

  it('serves an Anthropic client from a chat seller over libp2p (translation)', async () => {
    const anthropic = new Anthropic({ apiKey: 'x', baseURL: buyer.url, maxRetries: 0 });
    const message = await anthropic.messages.create({
      model: `${dearWorking.node.peerId}@openai/gpt-4o-mini-2024-07-18`,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'served well' });
  });

  it('cancels the upstream call when the client goes away mid-stream', async () => {
    good.configure({ text: 'a b c d e f g h', chunkDelayMs: 200, fault: 'hang-after-first-chunk' });
    const controller = new AbortController();
    const response = await fetch(`${buyer.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: `${dearWorking.node.peerId}@openai/gpt-4o-mini-2024-07-18`,
        stream: true,
        messages: [{ role: 'user', content: 'cancel me' }],
      }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const upstreamCall = good.requests.at(-1)!;
    await upstreamCall.done;
    expect(upstreamCall.closedEarly).toBe(true);
    good.configure({ text: 'served well', fault: 'none', chunkDelayMs: 0 });
  });

  it('reports the network in /_svc/status', async () => {
    const status = (await (await fetch(`${buyer.url}/_svc/status`)).json()) as Record<
      string,
      unknown
    >;
    expect(status.peerCount).toBe(2);
    expect(status.reachability).toBe('online');
    expect(status.dhtNodeCount as number).toBeGreaterThan(0);
  });
});
