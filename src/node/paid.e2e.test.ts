/**
 * The headline scenario, everything real: anvil (startLocalChain), a libp2p bootstrap node, a paid
 * seller (`startPaidSeller`) relaying to a fake OpenAI upstream, the buyer HTTP proxy
 * (`startPaidBuyerNode`) and the official `openai` SDK as the client. Only the upstream vendor
 * is faked.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForDiscovery } from '../buyer/testing/discovery.js';
import { DEFAULT_FAUCET_ETH, type LocalChain } from '../chain/index.js';
import type { IdentityStore } from '../identity/index.js';
import { formatUsd, parseUsd } from '../money/index.js';
import type { SvcNode } from '../network/index.js';
import { loopbackNetworkConfig, randomIdentity, waitFor } from '../network/testing/loopback.js';
import { trustScore } from '../payments/index.js';
import { manualClock } from '../payments/testing.js';
import { type FakeUpstream, startFakeUpstream } from '../seller/testing/index.js';
import type { PaidBuyerNode } from './startBuyerNode.js';
import {
  type PaidSellerHandle,
  type StartPaidSellerOptions,
  startPaidSeller,
} from './startSellerNode.js';
import { PaidNetwork, PER_REQUEST, sellerConfig, TEXT, USAGE } from './testing/paidFixture.js';

describe('paid sellers end to end (anvil + libp2p + buyer proxy + openai SDK)', () => {
  let net: PaidNetwork;
  let chain: LocalChain;
  let bootstrap: SvcNode;
  let upstream: FakeUpstream;
  let seller: PaidSellerHandle;
  let sellerOptions: StartPaidSellerOptions;
  let buyer: PaidBuyerNode;
  let openai: OpenAI;
  let buyerAddress: `0x${string}`;
  let identities: IdentityStore;
  let buyerDir: string;
  const sellerClock = manualClock();
  const tempDir = (prefix: string) => net.tempDir(prefix);
  const channels = () => net.channels();

  beforeAll(async () => {
    net = await PaidNetwork.start();
    ({ chain, bootstrap, buyer, buyerAddress, identities, buyerDir } = net);
    upstream = await startFakeUpstream({ text: TEXT, usage: USAGE });
    sellerOptions = await net.sellerOptions(upstream, {
      paymentsConfig: { settleThresholdUsd: '5.00', closeIdleSeconds: 3600 },
      clock: sellerClock,
    });
    seller = await net.startSeller(sellerOptions);
    openai = new OpenAI({ apiKey: 'any', baseURL: `${buyer.url}/v1`, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await net?.stop();
    await upstream?.close();
  });

  it('advertises where it is paid in its signed metadata', () => {
    expect(seller.metadata().capabilities.payments).toEqual({
      chainId: chain.contract.chainId,
      paymentsContract: chain.contract.paymentsAddress,
    });
    expect(buyer.payments).toBeDefined();
  });

  it('answers 402 to a paid request without payment, and serves free offers without any', async () => {
    const body = (model: string) =>
      new TextEncoder().encode(
        JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      );
    const upstreamCalls = upstream.requests.length;
    const unpaid = await buyer.service.deps.transport.request(seller.node.peerId, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: body('gpt-paid'),
    });
    let text = '';
    for await (const chunk of unpaid.body) text += Buffer.from(chunk).toString('utf8');
    expect(unpaid.status).toBe(402);
    expect(JSON.parse(text).error.code).toBe('payment_invalid');
    expect(upstream.requests.length).toBe(upstreamCalls); // refused before any upstream call

    const free = await openai.chat.completions.create({
      model: 'gpt-free',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(free.choices[0]!.message.content).toBe(TEXT);
    expect(await channels()).toEqual([]);
  });

  it('pays the seller exactly the advertised price for delivered tokens, then returns the rest', async () => {
    const ask = (maxTokens?: number) => ({
      model: 'gpt-paid',
      messages: [{ role: 'user' as const, content: 'Say something worth paying for.' }],
      ...(maxTokens ? { max_tokens: maxTokens } : {}),
    });

    // No credits yet: 402 insufficient_deposits in the OpenAI error style.
    const broke = await openai.chat.completions.create(ask()).catch((error: unknown) => error);
    expect(broke).toBeInstanceOf(OpenAI.APIError);
    expect((broke as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((broke as InstanceType<typeof OpenAI.APIError>).code).toBe('insufficient_deposits');

    // USDC arrives in the wallet; the running buyer's sweeper deposits it.
    await chain.faucet(buyerAddress, { usdcMicro: 1_000_000n });
    await waitFor(
      async () => (await chain.contract.creditsOf(buyerAddress)) === 1_000_000n,
      20_000,
      'deposit swept',
    );

    let expected = 0n;
    // Plain requests: the header shows exactly what the buyer signs.
    for (let index = 0; index < 3; index++) {
      const { data, response } = await openai.chat.completions.create(ask()).withResponse();
      expect(data.choices[0]!.message.content).toBe(TEXT);
      expect(response.headers.get('x-svc-peer-id')).toBe(seller.node.peerId);
      expect(response.headers.get('x-svc-estimated-cost-usd')).toBe(formatUsd(PER_REQUEST));
      expected += PER_REQUEST;
    }
    // Streamed requests.
    for (let index = 0; index < 2; index++) {
      const stream = await openai.chat.completions.create({ ...ask(), stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe(TEXT);
      expected += PER_REQUEST;
    }
    await waitFor(async () => (await channels())[0]?.requests === 5, 10_000, 'five requests paid');
    let [channel] = await channels();
    expect(channel!.seller.toLowerCase()).toBe(`0x${seller.node.peerId}`);
    expect(channel!.status).toBe('open');
    expect(BigInt(channel!.signedMicro)).toBe(expected);

    // A stream cancelled midway: billed for what was delivered (the buyer's record says what).
    upstream.configure({ text: TEXT, usage: USAGE, chunkDelayMs: 150 });
    const controller = new AbortController();
    const { data: slow, response: slowResponse } = await openai.chat.completions
      .create({ ...ask(), stream: true }, { signal: controller.signal })
      .withResponse();
    const cancelledId = slowResponse.headers.get('x-svc-request-id')!;
    const seen = await (async () => {
      try {
        for await (const chunk of slow) {
          if (chunk.choices[0]?.delta?.content) {
            controller.abort();
            return true;
          }
        }
      } catch {
        return true;
      }
      return false;
    })();
    expect(seen).toBe(true);
    upstream.configure({ text: TEXT, usage: USAGE });
    await waitFor(async () => (await channels())[0]?.requests === 6, 15_000, 'cancel paid');
    const record = (await (await fetch(`${buyer.url}/_svc/requests/${cancelledId}`)).json()) as {
      completed: boolean;
      costUsd: string;
    };
    expect(record.completed).toBe(false);
    const cancelledCost = parseUsd(record.costUsd);
    expect(cancelledCost).toBeLessThanOrEqual(PER_REQUEST);
    expected += cancelledCost;
    [channel] = await channels();
    expect(BigInt(channel!.signedMicro)).toBe(expected);

    // More than the credits cover: 402, and after another deposit the same request goes through.
    const big = ask(100_000); // up to 2 USD of output
    const over = await openai.chat.completions.create(big).catch((error: unknown) => error);
    expect((over as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((over as InstanceType<typeof OpenAI.APIError>).code).toBe('insufficient_deposits');
    await chain.faucet(buyerAddress, { usdcMicro: 3_000_000n });
    await waitFor(
      async () => (await chain.contract.usdcBalanceOf(buyerAddress)) === 0n,
      20_000,
      'second deposit swept',
    );
    const { response: bigResponse } = await openai.chat.completions.create(big).withResponse();
    expect(bigResponse.headers.get('x-svc-estimated-cost-usd')).toBe(formatUsd(PER_REQUEST));
    expected += PER_REQUEST;
    await waitFor(async () => (await channels())[0]?.requests === 7, 10_000, 'big paid');

    // Every voucher reached the seller over /svc/voucher/1 (the last one only that way).
    await waitFor(
      () => seller.payments!.channels()[0]?.voucherMicro === expected,
      10_000,
      'seller holds the latest voucher',
    );

    // The seller restarts (same key and data dir) before settling: nothing earned is lost.
    await net.stopSeller(seller);
    seller = await net.startSeller({ ...sellerOptions });

    // Idle past closeIdleSeconds: the seller settles and closes on chain.
    sellerClock.advance(3601 * 1000);
    await seller.payments!.tick();
    const sellerAddress = `0x${seller.node.peerId}` as const;
    expect(await chain.contract.usdcBalanceOf(sellerAddress)).toBe(expected);
    expect((await chain.contract.readChannel(channel!.channelId as `0x${string}`)).status).toBe(
      'closed',
    );
    // The unspent lock is back in the buyer's credits.
    expect(await chain.contract.creditsOf(buyerAddress)).toBe(4_000_000n - expected);
    await buyer.payments!.channels.reconcile();
    expect(await channels()).toEqual([]);

    // Routing and browse see the seller's on-chain record.
    await buyer.reputation!.refresh();
    const [stats] = await chain.contract.sellerStats([sellerAddress]);
    const score = trustScore(stats!, await chain.contract.chainTime());
    const peers = (await (await fetch(`${buyer.url}/_svc/peers`)).json()) as {
      peers: {
        peerId: string;
        reputationScore: number | null;
        reputation: { volumeUsd: string | null };
      }[];
    };
    const peer = peers.peers.find((entry) => entry.peerId === seller.node.peerId)!;
    expect(peer.reputationScore).toBe(score);
    expect(peer.reputation.volumeUsd).toBe(formatUsd(expected));
  }, 90_000);

  it('x-svc-buyer-identity picks the wallet that pays (its own deposit and channel)', async () => {
    const teamA = identities.create('team-a').address as `0x${string}`;
    await chain.faucet(teamA, { usdcMicro: 1_000_000n, ethWei: DEFAULT_FAUCET_ETH });
    await waitFor(
      async () => (await chain.contract.creditsOf(teamA)) === 1_000_000n,
      20_000,
      'team-a deposit swept',
    );
    // The seller restarted on a new port in the previous test: let the buyer find it again.
    const current = seller.node.multiaddrs();
    await waitForDiscovery(
      buyer,
      () => {
        const route = buyer.directory.route(seller.node.peerId);
        return route?.addresses.some((address) => current.includes(address.toString()));
      },
      'restarted seller rediscovered',
    );
    const client = new OpenAI({
      apiKey: 'any',
      baseURL: `${buyer.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-svc-buyer-identity': 'team-a' },
    });
    const { response } = await client.chat.completions
      .create({ model: 'gpt-paid', messages: [{ role: 'user', content: 'Bill team A.' }] })
      .withResponse();
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe(formatUsd(PER_REQUEST));
    const row = await waitFor(
      async () => (await channels()).find((channel) => channel.identity === 'team-a'),
      10_000,
      'team-a channel',
    );
    expect(row.seller.toLowerCase()).toBe(`0x${seller.node.peerId}`);
    // Paid from team A's own credits: the lock left them, not the default identity's.
    expect(await chain.contract.creditsOf(teamA)).toBeLessThan(1_000_000n);
    expect(BigInt(row.signedMicro)).toBe(PER_REQUEST);
  }, 60_000);

  it('the trust gate applies the on-chain score: a minimum above it excludes the seller, at it serves', async () => {
    await buyer.reputation!.refresh();
    const sellerAddress = `0x${seller.node.peerId}` as const;
    const [stats] = await chain.contract.sellerStats([sellerAddress]);
    const score = trustScore(stats!, await chain.contract.chainTime());
    expect(score).toBeGreaterThan(0);
    // The gateway's routing policy is the way to raise the minimum per request (control secret).
    const secretFile = join(buyerDir, 'gateway', 'control.secret');
    mkdirSync(dirname(secretFile), { recursive: true });
    writeFileSync(secretFile, 'trust-gate-test-secret');
    const ask = (minTrustScore: number) =>
      fetch(`${buyer.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-svc-gateway-auth': 'trust-gate-test-secret',
          'x-svc-routing-policy': Buffer.from(JSON.stringify({ minTrustScore })).toString(
            'base64url',
          ),
        },
        body: JSON.stringify({ model: 'gpt-paid', messages: [{ role: 'user', content: 'hi' }] }),
      });
    try {
      const above = await ask(score! + 1);
      expect(above.status).toBe(502);
      const refused = (await above.json()) as { error: { code: string; message: string } };
      expect(refused.error.code).toBe('model_not_found');
      expect(refused.error.message).toContain(`trust score ${score} below minimum ${score! + 1}`);
      const at = await ask(score!);
      expect(at.status).toBe(200);
      expect(at.headers.get('x-svc-peer-id')).toBe(seller.node.peerId);
      expect(at.headers.get('x-svc-peer-reputation')).toBe(String(score));
      await at.arrayBuffer();
    } finally {
      rmSync(secretFile, { force: true });
    }
  }, 60_000);

  it('--free: a priced seller without a chain serves unpaid and advertises no payments', async () => {
    const free = await startPaidSeller({
      identity: randomIdentity(),
      seller: sellerConfig(upstream),
      network: loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] }),
      env: { FAKE_OPENAI_KEY: 'sk-fake' },
      dataDir: tempDir('free-seller'),
      chain: undefined,
      free: true,
    });
    try {
      expect(free.payments).toBeUndefined();
      expect(free.metadata().capabilities.payments).toBeUndefined();
      await waitForDiscovery(
        buyer,
        () => buyer.directory.get(free.node.peerId)?.reachable,
        'free seller discovered',
      );
      const answer = await buyer.service.deps.transport.request(free.node.peerId, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: new TextEncoder().encode(
          JSON.stringify({ model: 'gpt-paid', messages: [{ role: 'user', content: 'hi' }] }),
        ),
      });
      for await (const _ of answer.body) {
        // drain
      }
      expect(answer.status).toBe(200);
    } finally {
      await free.stop();
    }
  }, 60_000);
});
