/**
 * A seller that cannot be dialled (it listens on no TCP address, only on `/p2p-circuit`, and
 * only dials out) is found by a buyer through a relay reservation on the bootstrap node, and
 * serves requests, streams and cancels over the relayed connection (decision 141).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeReachability, type SvcNode } from '../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from '../network/testing/loopback.js';
import { type SellerHandle, startSeller } from '../seller/index.js';
import { type FakeUpstream, startFakeUpstream } from '../seller/testing/index.js';
import type { RunningBuyerNode } from './runBuyerNode.js';
import { startUnpaidBuyer } from './testing/discovery.js';

describe('a seller behind NAT, reached through the bootstrap relay', () => {
  let bootstrap: SvcNode;
  let upstream: FakeUpstream;
  let seller: SellerHandle;
  let buyer: RunningBuyerNode;
  let dataDir: string;
  let openai: OpenAI;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-relayed-'));
    bootstrap = await startLoopbackNode('bootstrap');
    const bootstrapAddr = bootstrap.multiaddrs()[0]!;
    upstream = await startFakeUpstream({ text: 'through the relay' });
    seller = await startSeller({
      identity: randomIdentity(),
      seller: {
        displayName: 'behind nat',
        uploadLimitBytes: 1024 * 1024,
        providers: [
          {
            type: 'openai-chat',
            name: 'openai',
            baseUrl: upstream.baseUrl,
            services: { 'gpt-4o-mini': { upstreamModel: 'gpt-4o-mini', categories: [] } },
            defaultPricing: { inputUsdPerMillion: 0.1, outputUsdPerMillion: 0.4 },
            maxConcurrency: 8,
          },
        ],
      },
      network: loopbackNetworkConfig({ bootstrap: [bootstrapAddr], listen: ['/p2p-circuit'] }),
    });
    await waitFor(
      () => seller.node.multiaddrs().some((address) => address.includes('/p2p-circuit')),
      30_000,
      'a relay reservation',
    );
    buyer = await startUnpaidBuyer(
      loopbackNetworkConfig({ bootstrap: [bootstrapAddr] }),
      dataDir,
      1,
    );
    openai = new OpenAI({ apiKey: 'x', baseURL: `${buyer.url}/v1`, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await buyer?.stop();
    await seller?.stop();
    await bootstrap?.stop();
    await upstream?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('has no dialable address of its own, only relay addresses', () => {
    const addresses = seller.node.multiaddrs();
    expect(addresses.length).toBeGreaterThan(0);
    for (const address of addresses) {
      expect(address).toContain(`/p2p/${bootstrap.libp2pPeerId.toString()}/p2p-circuit/`);
    }
  });

  it('says how each node is reachable', async () => {
    expect(describeReachability(seller.node.libp2p)).toMatchObject({
      mode: 'relayed',
      relays: [bootstrap.libp2pPeerId.toString()],
    });
    const status = (await (await fetch(`${buyer.url}/_svc/status`)).json()) as {
      network: { reachableAs: { mode: string } };
    };
    expect(status.network.reachableAs.mode).toBe('public');
  });

  it('serves a completion and a stream over the relayed connection', async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('through the relay');
    expect(response.headers.get('x-svc-peer-id')).toBe(seller.node.peerId);
    const connections = buyer.node.libp2p.getConnections(seller.node.libp2pPeerId);
    expect(connections.some((c) => c.remoteAddr.toString().includes('/p2p-circuit'))).toBe(true);
    // Unlimited relaying (decision 141): the connection carries no duration or data limit.
    expect(connections.every((c) => c.limits === undefined)).toBe(true);

    const stream = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream it' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('through the relay');
  });

  it('passes a cancel through the relay to the upstream call', async () => {
    upstream.configure({
      text: 'a b c d e f g h',
      chunkDelayMs: 200,
      fault: 'hang-after-first-chunk',
    });
    const controller = new AbortController();
    const response = await fetch(`${buyer.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'cancel me' }],
      }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const upstreamCall = upstream.requests.at(-1)!;
    await upstreamCall.done;
    expect(upstreamCall.closedEarly).toBe(true);
    upstream.configure({ text: 'through the relay', fault: 'none', chunkDelayMs: 0 });
  });
});
