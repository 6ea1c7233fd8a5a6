/**
 * Paid requests to a seller behind NAT: the seller listens only on `/p2p-circuit` (no TCP
 * address, it only dials out), reserves a slot on the bootstrap node's relay, and is paid
 * through a payment channel for completions, streams and a cancelled stream that all travel
 * over the relayed connection (decision 141).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUsd } from '../money/index.js';
import { describeReachability } from '../network/index.js';
import { loopbackNetworkConfig, waitFor } from '../network/testing/loopback.js';
import { type FakeUpstream, startFakeUpstream } from '../seller/testing/index.js';
import { type PaidSellerHandle, startPaidSeller } from './startSellerNode.js';
import { PaidNetwork, PER_REQUEST, TEXT, USAGE } from './testing/paidFixture.js';

describe('paid requests to a seller reached only through a relay', () => {
  let net: PaidNetwork;
  let upstream: FakeUpstream;
  let seller: PaidSellerHandle;
  let openai: OpenAI;

  beforeAll(async () => {
    net = await PaidNetwork.start();
    upstream = await startFakeUpstream({ text: TEXT, usage: USAGE });
    const options = {
      ...(await net.sellerOptions(upstream)),
      network: loopbackNetworkConfig({
        bootstrap: [net.bootstrap.multiaddrs()[0]!],
        listen: ['/p2p-circuit'],
      }),
    };
    seller = await startPaidSeller(options);
    await waitFor(
      () => describeReachability(seller.node.libp2p).mode === 'relayed',
      30_000,
      'a relay reservation',
    );
    await net.discover(seller);
    openai = new OpenAI({ apiKey: 'any', baseURL: `${net.buyer.url}/v1`, maxRetries: 0 });
    await net.chain.faucet(net.buyerAddress, { usdcMicro: 1_000_000n });
    await waitFor(
      async () => (await net.chain.contract.creditsOf(net.buyerAddress)) === 1_000_000n,
      20_000,
      'deposit swept',
    );
  }, 120_000);

  afterAll(async () => {
    await seller?.stop();
    await net?.stop();
    await upstream?.close();
  });

  it('pays for a completion, a stream and a cancelled stream over the relayed connection', async () => {
    const ask = {
      model: 'gpt-paid',
      messages: [{ role: 'user' as const, content: 'Say something worth paying for.' }],
    };
    const { data, response } = await openai.chat.completions.create(ask).withResponse();
    expect(data.choices[0]!.message.content).toBe(TEXT);
    expect(response.headers.get('x-svc-peer-id')).toBe(seller.node.peerId);
    const connections = net.buyer.node.libp2p.getConnections(seller.node.libp2pPeerId);
    expect(connections.length).toBeGreaterThan(0);
    expect(connections.every((c) => c.remoteAddr.toString().includes('/p2p-circuit'))).toBe(true);

    const stream = await openai.chat.completions.create({ ...ask, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(TEXT);
    await waitFor(async () => (await net.channels())[0]?.requests === 2, 10_000, 'two paid');
    expect(BigInt((await net.channels())[0]!.signedMicro)).toBe(2n * PER_REQUEST);

    upstream.configure({ text: TEXT, usage: USAGE, chunkDelayMs: 150 });
    const controller = new AbortController();
    const { data: slow, response: slowResponse } = await openai.chat.completions
      .create({ ...ask, stream: true }, { signal: controller.signal })
      .withResponse();
    const cancelledId = slowResponse.headers.get('x-svc-request-id')!;
    try {
      for await (const chunk of slow) {
        if (chunk.choices[0]?.delta?.content) {
          controller.abort();
          break;
        }
      }
    } catch {
      // the abort ends the iteration
    }
    upstream.configure({ text: TEXT, usage: USAGE });
    await waitFor(async () => (await net.channels())[0]?.requests === 3, 15_000, 'cancel paid');
    const record = (await (
      await fetch(`${net.buyer.url}/_svc/requests/${cancelledId}`)
    ).json()) as {
      completed: boolean;
      costUsd: string;
    };
    expect(record.completed).toBe(false);
    expect(parseUsd(record.costUsd)).toBeLessThanOrEqual(PER_REQUEST);
    expect(BigInt((await net.channels())[0]!.signedMicro)).toBe(
      2n * PER_REQUEST + parseUsd(record.costUsd),
    );
  });
});
