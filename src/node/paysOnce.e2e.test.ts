/**
 * Money to the last cent, everything real: anvil with the contracts, libp2p, a paid seller
 * relaying to fake text and video upstreams, `svc buyer start` as its own process, the gateway in
 * front and `svc buyer identity remove` run as a command beside it.
 * - A finished video is paid once, at delivery (spec 3.2): retrieving it again costs nothing.
 * - A removed identity pays for nothing more (spec 2.2): the next requests of a key paying with
 *   it fail with 403 `identity_removed`, and its channel signs nothing more.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema, type SellerConfig } from '../config/index.js';
import { createKey } from '../gateway/admin/createKey.js';
import { type RunningGateway, startGateway } from '../gateway/server/startGateway.js';
import { createStore } from '../gateway/store/createStore.js';
import type { GatewayStore } from '../gateway/store/types.js';
import { IdentityStore } from '../identity/index.js';
import { silentLogger } from '../log/index.js';
import { type FakeUpstream, startFakeUpstream, TINY_MP4 } from '../seller/testing/index.js';
import { waitFor } from '../testing/index.js';
import {
  type BuyerProcess,
  configureBuyerDir,
  discoverFrom,
  startBuyerProcess,
} from './testing/buyerProcess.js';
import { PaidNetwork } from './testing/paidFixture.js';

const CLI = fileURLToPath(new URL('../cli/index.ts', import.meta.url));

interface ChannelRow {
  identity: string;
  seller: string;
  requests: number;
  signedMicro: string;
}

describe('paid once, and never by a removed identity', () => {
  let net: PaidNetwork;
  let text: FakeUpstream;
  let video: FakeUpstream;
  let buyer: BuyerProcess;
  let gateway: RunningGateway;
  let store: GatewayStore;
  let peerId: string;
  /** The seller's cumulative voucher amounts over all its channels. */
  let sellerVouchered: () => bigint;

  const channel = async (identity: string): Promise<ChannelRow | undefined> => {
    const reply = await fetch(`${buyer.url}/_svc/channels`);
    const { channels } = (await reply.json()) as { channels: ChannelRow[] };
    return channels.find((row) => row.identity === identity && row.seller === `0x${peerId}`);
  };
  const signed = async (identity: string) => BigInt((await channel(identity))?.signedMicro ?? '0');

  beforeAll(async () => {
    net = await PaidNetwork.start();
    await net.fundBuyer(5_000_000n);
    text = await startFakeUpstream();
    video = await startFakeUpstream({ videoPollsUntilDone: 1 });
    const options = await net.sellerOptions(text);
    const videoProvider: SellerConfig['providers'][number] = {
      type: 'video',
      name: 'videos',
      baseUrl: video.url,
      services: { 'kling-2': { categories: [], videoUsd: 0.5 } },
      defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
      maxConcurrency: 4,
    };
    const seller = await net.startSeller({
      ...options,
      seller: { ...options.seller, providers: [...options.seller.providers, videoProvider] },
    });
    peerId = seller.node.peerId;
    sellerVouchered = () =>
      seller.payments!.channels().reduce((sum, row) => sum + row.voucherMicro, 0n);
    await net.stopBuyer();
    configureBuyerDir(net);
    // Sweep wallets into credits every second, so a funded identity pays at once.
    const configPath = join(net.buyerDir, 'config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as {
      chain: { payments: Record<string, unknown> };
    };
    config.chain.payments.sweepIntervalSeconds = 1;
    writeFileSync(configPath, JSON.stringify(config));
    buyer = await startBuyerProcess(net.buyerDir);
    await discoverFrom(buyer.url, peerId);
    store = await createStore({ dataDir: net.tempDir('once-gateway') });
    const gatewayConfig = configSchema.parse({ gateway: { port: 0, buyerUrl: buyer.url } }).gateway;
    gateway = await startGateway({
      config: gatewayConfig,
      dataDir: net.buyerDir,
      store,
      logger: silentLogger(),
    });
  }, 240_000);

  afterAll(async () => {
    await gateway?.stop();
    await store?.close();
    await buyer?.stop();
    await net?.stop();
    await text?.close();
    await video?.close();
  });

  it('pays a finished video once, however often it is retrieved', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${buyer.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const before = await signed('default');
    const sellerBefore = sellerVouchered();
    const queued = await post('/api/v1/video/queue', {
      model: `${peerId}@kling-2`,
      prompt: 'a cat surfing',
      duration: '5s',
    });
    expect(queued.status).toBe(200);
    const { queue_id } = (await queued.json()) as { queue_id: string };
    const pending = await post('/api/v1/video/retrieve', { model: 'kling-2', queue_id });
    expect(await pending.json()).toMatchObject({ status: 'in_progress' });
    const costs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const done = await post('/api/v1/video/retrieve', { model: 'kling-2', queue_id });
      expect(done.status).toBe(200);
      expect(done.headers.get('content-type')).toBe('video/mp4');
      expect(Buffer.from(await done.arrayBuffer()).equals(TINY_MP4)).toBe(true);
      costs.push(done.headers.get('x-svc-estimated-cost-usd') ?? 'missing');
    }
    expect(costs).toEqual(['0.500000', '0.000000', '0.000000']);
    expect((await signed('default')) - before).toBe(500_000n);
    await waitFor(() => sellerVouchered() - sellerBefore === 500_000n, 20_000, 'video voucher');
    expect(sellerVouchered() - sellerBefore).toBe(500_000n);
  }, 120_000);

  it('refuses a removed identity: its key fails with identity_removed and pays nothing more', async () => {
    const identities = new IdentityStore(net.buyerDir, {});
    const teamx = identities.create('teamx');
    await net.chain.faucet(teamx.address, { usdcMicro: 2_000_000n });
    await waitFor(
      async () => (await net.chain.contract.creditsOf(teamx.address)) === 2_000_000n,
      30_000,
      'teamx credits swept',
    );
    const { key, secret } = await createKey(
      store,
      identities,
      { label: 'teamx', identity: { kind: 'existing', name: 'teamx' } },
      Date.now(),
    );
    const chat = () =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: `${peerId}@gpt-paid`,
          messages: [{ role: 'user', content: 'hi' }],
          max_tokens: 50,
        }),
      });
    expect((await chat()).status).toBe(200);
    await waitFor(async () => (await channel('teamx'))?.requests === 1, 10_000, 'teamx paid');
    const paid = await signed('teamx');
    expect(paid).toBeGreaterThan(0n);
    await waitFor(async () => (await store.keyUsage(key.id)).requests === 1, 10_000, 'logged');
    const charged = await store.ledgerTotal(key.id);

    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', CLI, '--data-dir', net.buyerDir, 'buyer', 'identity', 'remove', 'teamx'],
      { env: { ...process.env, NODE_NO_WARNINGS: '1' } },
    );
    expect(stdout).toMatch(/archived/);

    for (let i = 0; i < 2; i++) {
      const refused = await chat();
      expect(refused.status).toBe(403);
      const body = (await refused.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('identity_removed');
      expect(body.error.message).toContain('"teamx"');
    }
    expect(await channel('teamx')).toMatchObject({ requests: 1, signedMicro: String(paid) });
    expect(await store.ledgerTotal(key.id)).toBe(charged);
  }, 120_000);
});
