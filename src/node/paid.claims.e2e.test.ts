/**
 * Usage claims end to end (anvil + libp2p + paying buyer + openai SDK): hidden reasoning tokens
 * are paid as claimed, an inflated claim is paid at the buyer's own count and the seller ranks
 * lower — also after the buyer restarts.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOfUsage, type TokenUsage } from '../money/index.js';
import { waitFor } from '../network/testing/loopback.js';
import { type FakeUpstream, startFakeUpstream } from '../seller/testing/index.js';
import { PaidNetwork, PRICE, TEXT } from './testing/paidFixture.js';

describe('usage claims of paid sellers', () => {
  let net: PaidNetwork;
  const upstreams: FakeUpstream[] = [];
  const openai = () => new OpenAI({ apiKey: 'any', baseURL: `${net.buyer.url}/v1`, maxRetries: 0 });
  /** A paid seller whose fake upstream reports `usage` for every answer. */
  const sellerReporting = async (usage: TokenUsage) => {
    const upstream = await startFakeUpstream({ text: TEXT, usage });
    upstreams.push(upstream);
    return net.startSeller(await net.sellerOptions(upstream));
  };
  const channelWith = (peerId: string) =>
    waitFor(
      async () => (await net.channels()).find((row) => row.seller === `0x${peerId}`),
      10_000,
      `channel with ${peerId}`,
    );

  beforeAll(async () => {
    net = await PaidNetwork.start();
    await net.fundBuyer(5_000_000n);
  }, 120_000);

  afterAll(async () => {
    await net?.stop();
    for (const upstream of upstreams) await upstream.close();
  });

  it("pays a reasoning model's hidden reasoning tokens as claimed (the visible output is checked)", async () => {
    const reasoningUsage: TokenUsage = {
      inputTokens: 14,
      cachedInputTokens: 0,
      outputTokens: 309,
      reasoningTokens: 300,
    };
    const reasoner = await sellerReporting(reasoningUsage);
    const { data, response } = await openai()
      .chat.completions.create({
        model: `${reasoner.node.peerId}@gpt-paid`,
        messages: [{ role: 'user', content: 'Think hard, answer briefly.' }],
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe(TEXT);
    expect(data.usage?.completion_tokens_details?.reasoning_tokens).toBe(300);
    expect(response.headers.get('x-svc-output-tokens')).toBe('309');
    const row = await channelWith(reasoner.node.peerId);
    expect(row.refusedClaims).toBe(0);
    expect(BigInt(row.signedMicro)).toBe(costOfUsage(reasoningUsage, PRICE));
  }, 60_000);

  it('pays its own count for an inflated usage claim and ranks that seller lower, also after a restart', async () => {
    const inflated: TokenUsage = { inputTokens: 14, cachedInputTokens: 0, outputTokens: 900 };
    const cheat = await sellerReporting(inflated);
    await net.buyer.reputation!.refresh();
    const before = net.buyer.reputation!.score(cheat.node.peerId);
    const { data } = await openai()
      .chat.completions.create({
        model: `${cheat.node.peerId}@gpt-paid`,
        messages: [{ role: 'user', content: 'Say something worth paying for.' }],
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe(TEXT);
    const row = await channelWith(cheat.node.peerId);
    expect(row.refusedClaims).toBe(1);
    // Paid for the buyer's own count of the 8 delivered words, not 900 tokens.
    expect(row.outputTokens).toBeLessThan(50);
    expect(BigInt(row.signedMicro)).toBeLessThan(costOfUsage(inflated, PRICE));
    const penalised = before === undefined ? 0 : Math.max(0, before - 25);
    await waitFor(
      () => net.buyer.reputation!.score(cheat.node.peerId) === penalised,
      5_000,
      'seller penalised',
    );
    // The refusal is in the buyer's voucher history: a restarted buyer still ranks it lower.
    const restarted = await net.restartBuyer();
    await restarted.reputation!.refresh();
    expect(restarted.reputation!.score(cheat.node.peerId)).toBe(penalised);
  }, 60_000);
});
