/**
 * Money when a paid seller fails before its first content
 * (docs/decisions/217-a-stream-starts-with-its-first-content.md), everything real: anvil, libp2p,
 * two paid sellers, the buyer proxy and the official `@anthropic-ai/sdk` client. The cheaper
 * seller's upstream sends `message_start` (reporting output tokens, as Anthropic's does) and a
 * ping, then an `overloaded_error` event: the client gets the dearer seller's whole answer, the
 * first seller is paid nothing and bills nothing, and its channel takes the next paid request as
 * if nothing had happened.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SellerConfig } from '../config/index.js';
import { messageText } from '../formats/testing/sdkClients.js';
import { parseUsd } from '../money/index.js';
import { waitFor } from '../network/testing/loopback.js';
import { type FakeUpstream, startFakeUpstream } from '../seller/testing/index.js';
import type { PaidSellerHandle } from './startSellerNode.js';
import { PaidNetwork, PRICING, TEXT, USAGE } from './testing/paidFixture.js';

/** A seller of `claude-paid` (Anthropic messages) at `pricing`. */
function messagesSeller(upstream: FakeUpstream, pricing: typeof PRICING): SellerConfig {
  return {
    displayName: 'paid messages seller',
    uploadLimitBytes: 64 * 1024,
    providers: [
      {
        type: 'anthropic-messages',
        name: 'anthropic',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_OPENAI_KEY',
        services: { 'claude-paid': { categories: ['chat'] } },
        defaultPricing: pricing,
        maxConcurrency: 4,
      },
    ],
  };
}

describe('a paid seller failing before its first content', () => {
  let net: PaidNetwork;
  let failing: FakeUpstream;
  let good: FakeUpstream;
  let first: PaidSellerHandle;
  let second: PaidSellerHandle;
  let anthropic: Anthropic;

  beforeAll(async () => {
    net = await PaidNetwork.start({ audits: false });
    failing = await startFakeUpstream({ text: TEXT, usage: USAGE, fault: 'error-before-content' });
    good = await startFakeUpstream({ text: TEXT, usage: USAGE });
    // The first seller is cheaper, so it is asked first.
    const cheaper = { ...PRICING, outputUsdPerMillion: PRICING.outputUsdPerMillion / 2 };
    first = await net.startSeller({
      ...(await net.sellerOptions(failing)),
      seller: messagesSeller(failing, cheaper),
    });
    second = await net.startSeller({
      ...(await net.sellerOptions(good)),
      seller: messagesSeller(good, PRICING),
    });
    await net.fundBuyer(1_000_000n);
    anthropic = new Anthropic({ apiKey: 'x', baseURL: net.buyer.url, maxRetries: 0 });
  }, 180_000);

  afterAll(async () => {
    await net?.stop();
    await failing?.close();
    await good?.close();
  });

  /** The buyer's channel with `seller` (`GET /_svc/channels`). */
  const channelWith = async (seller: PaidSellerHandle) =>
    (await net.channels()).find((row) => row.seller.toLowerCase() === `0x${seller.node.peerId}`);
  /** What the buyer's record of a request says it cost, in micro-USD. */
  const costOf = async (requestId: string) => {
    const reply = await fetch(`${net.buyer.url}/_svc/requests/${requestId}`);
    return parseUsd(((await reply.json()) as { costUsd: string }).costUsd);
  };

  it('pays the seller that answered, and nothing to the one that failed', async () => {
    const { data: stream, response } = await anthropic.messages
      .create({
        model: 'claude-paid',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Say something worth paying for.' }],
        stream: true,
      })
      .withResponse();
    const text = await messageText(stream);
    expect(text).toBe(TEXT);
    expect(response.headers.get('x-svc-peer-id')).toBe(second.node.peerId);
    expect(response.headers.get('x-svc-attempts')).toBe(
      `${first.node.peerId}@claude-paid:error_event`,
    );
    const cost = await costOf(response.headers.get('x-svc-request-id')!);
    expect(cost).toBeGreaterThan(0n);

    // The answering seller holds a voucher for exactly what the buyer recorded.
    await waitFor(
      () => second.payments!.channels()[0]?.voucherMicro === cost,
      15_000,
      'second seller paid',
    );
    expect(BigInt((await channelWith(second))!.signedMicro)).toBe(cost);
    expect(second.payments!.channels()[0]!.billedMicro).toBe(cost);

    // The failed seller: nothing signed, nothing billed (its upstream's message_start reported
    // output tokens, but no content came before its error event).
    expect(BigInt((await channelWith(first))?.signedMicro ?? '0')).toBe(0n);
    await waitFor(
      () => first.payments!.channels()[0]?.requests === 1,
      10_000,
      'first seller recorded the request',
    );
    expect(first.payments!.channels()[0]).toMatchObject({ billedMicro: 0n, voucherMicro: 0n });
  });

  it("takes the failed seller's next paid request on the same channel, to the micro-USD", async () => {
    failing.configure({ fault: 'none' });
    const { response } = await anthropic.messages
      .create({
        model: `${first.node.peerId}@claude-paid`,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Now you can answer.' }],
      })
      .withResponse();
    expect(response.status).toBe(200);
    const cost = await costOf(response.headers.get('x-svc-request-id')!);
    expect(cost).toBeGreaterThan(0n);
    await waitFor(
      () => first.payments!.channels()[0]?.voucherMicro === cost,
      15_000,
      'first seller paid',
    );
    expect(first.payments!.channels()).toHaveLength(1);
    expect(first.payments!.channels()[0]).toMatchObject({ billedMicro: cost, requests: 2 });
    expect(BigInt((await channelWith(first))!.signedMicro)).toBe(cost);
  });
});
