/**
 * End to end on anvil: the gateway's POST /v1/key/topup with the real x402 TopupService, the
 * SQLite store, the local facilitator over HTTP, and the official x402 client paying.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { parseEther } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../src/config/index.js';
import type { GatewayStore } from '../src/gateway/index.js';
import { createKey, createStore, type RunningGateway, startGateway } from '../src/gateway/index.js';
import { IdentityStore } from '../src/identity/index.js';
import { silentLogger } from '../src/log/index.js';
import { parseUsd } from '../src/money/index.js';
import { DepositSweeper } from '../src/payments/index.js';
import { removeTempDir, tempDir } from '../src/testing/index.js';
import { createTopupService, payTopup } from '../src/x402/index.js';
import {
  officialPayment,
  paymentHeader,
  startTopupHarness,
  type TopupHarness,
} from '../src/x402/testing/index.js';

let h: TopupHarness;
let dataDir: string;
let store: GatewayStore;
let gateway: RunningGateway;
let identities: IdentityStore;

beforeAll(async () => {
  h = await startTopupHarness();
  dataDir = tempDir('svc-x402-e2e-');
  store = await createStore({ dataDir });
  identities = new IdentityStore(dataDir, {});
  const config = configSchema.parse({
    gateway: { port: 0, buyerUrl: 'http://127.0.0.1:9' },
  }).gateway;
  gateway = await startGateway({
    config,
    dataDir,
    store,
    logger: silentLogger(),
    env: {},
    topups: async (opened) =>
      (
        await createTopupService({
          ledger: opened.topupLedger(),
          publicClient: h.chain.clients.publicClient,
          usdcAddress: h.asset.address,
          network: 'local',
          facilitator: h.facilitatorServer.url,
          topupMinUsd: config.topupMinUsd,
          topupMaxUsd: config.topupMaxUsd,
          env: {},
          reconcileIntervalMs: 0,
        })
      ).service,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await store?.close();
  await h?.stop();
  if (dataDir) removeTempDir(dataDir);
});

function post(secret: string | null, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${gateway.url}/v1/key/topup`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(secret ? { authorization: `Bearer ${secret}` } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

async function toppedUp(secret: string): Promise<string> {
  const response = await fetch(`${gateway.url}/v1/key`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  const view = (await response.json()) as {
    data: { usage: { topped_up_usd: string }; buyer_address: string };
  };
  return view.data.usage.topped_up_usd;
}

describe('POST /v1/key/topup on the gateway', () => {
  it('official client: 402 -> sign -> 200; wallet and topped_up_usd rise by exactly the amount', async () => {
    const { key, secret } = await createKey(
      store,
      identities,
      {
        label: 'topup',
        identity: { kind: 'new' },
        allowTopup: true,
        limits: { weekly: parseUsd('3') },
      },
      Date.now(),
    );
    const wallet = identities.load(key.identity).record.address;
    const payer = await h.newPayer('100');
    expect(await toppedUp(secret)).toBe('0.000000');

    const result = await payTopup({
      gatewayUrl: gateway.url,
      apiKey: secret,
      amountUsd: '25',
      account: payer,
    });
    expect(result.status).toBe(200);
    expect(result.challenge.accepts[0]?.payTo.toLowerCase()).toBe(wallet.toLowerCase());
    expect(result.settle?.success).toBe(true);
    expect(await h.usdcBalance(wallet)).toBe(parseUsd('25'));
    expect(await toppedUp(secret)).toBe('25.000000');

    // A second top-up adds; limits are untouched.
    const again = await payTopup({
      gatewayUrl: gateway.url,
      apiKey: secret,
      amountUsd: '2',
      account: payer,
    });
    expect(again.status).toBe(200);
    expect(await toppedUp(secret)).toBe('27.000000');
    expect(await h.usdcBalance(wallet)).toBe(parseUsd('27'));
    const view = (await (
      await fetch(`${gateway.url}/v1/key`, { headers: { authorization: `Bearer ${secret}` } })
    ).json()) as {
      data: {
        limits: { weekly: { limit_usd: string | null }; total: { limit_usd: string | null } };
      };
    };
    expect(view.data.limits.weekly.limit_usd).toBe('3.000000');
    expect(view.data.limits.total.limit_usd).toBeNull();
  });

  it("the running buyer's sweep deposits a top-up-only wallet (USDC, no ETH) into the key identity's credits", async () => {
    const { key, secret } = await createKey(
      store,
      identities,
      { label: 'sweep', identity: { kind: 'new' }, allowTopup: true },
      Date.now(),
    );
    const wallet = identities.load(key.identity).record.address;
    const payer = await h.newPayer('10');
    const paid = await payTopup({
      gatewayUrl: gateway.url,
      apiKey: secret,
      amountUsd: '6',
      account: payer,
    });
    expect(paid.status).toBe(200);
    // The top-up brought USDC only: the key's wallet never holds ETH. The buyer's default
    // identity is the relayer (decision 080) and pays the gas of the gasless deposit.
    expect(await h.chain.clients.publicClient.getBalance({ address: wallet })).toBe(0n);
    const relayer = identities.loadDefault().account.address;
    await h.chain.faucet(relayer, { ethWei: parseEther('1') });
    const relayerUsdc = await h.usdcBalance(relayer);
    const sweeper = new DepositSweeper({
      identities: new IdentityStore(dataDir, {}),
      contract: h.chain.contract,
      logger: silentLogger(),
      // The first pass runs at start; the next would be a minute later.
      intervalMs: 60_000,
    });
    sweeper.start();
    try {
      const deadline = Date.now() + 20_000;
      while ((await h.chain.contract.creditsOf(wallet)) === 0n && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await sweeper.stop();
    }
    expect(await h.chain.contract.creditsOf(wallet)).toBe(parseUsd('6'));
    expect(await h.usdcBalance(wallet)).toBe(0n);
    expect(await h.chain.clients.publicClient.getBalance({ address: wallet })).toBe(0n);
    expect(await h.usdcBalance(relayer)).toBe(relayerUsdc);
    expect(await h.chain.contract.creditsOf(relayer)).toBe(0n);
  });

  it('a replayed PAYMENT-SIGNATURE is refused and credits nothing more', async () => {
    const { key, secret } = await createKey(
      store,
      identities,
      { label: 'replay', identity: { kind: 'new' }, allowTopup: true },
      Date.now(),
    );
    const wallet = identities.load(key.identity).record.address;
    const payer = await h.newPayer('20');
    const challenge = await post(secret, { amount_usd: '5' });
    expect(challenge.status).toBe(402);
    expect(challenge.headers.get('access-control-expose-headers')).toContain('PAYMENT-RESPONSE');
    const required = decodePaymentRequiredHeader(challenge.headers.get('payment-required')!);
    const header = paymentHeader(await officialPayment(payer, required));

    const paid = await post(secret, { amount_usd: '5' }, { 'PAYMENT-SIGNATURE': header });
    expect(paid.status).toBe(200);
    const settle = decodePaymentResponseHeader(paid.headers.get('payment-response')!);
    expect(settle.success).toBe(true);

    const replay = await post(secret, { amount_usd: '5' }, { 'PAYMENT-SIGNATURE': header });
    expect(replay.status).toBe(409);
    expect(((await replay.json()) as { error: { code: string } }).error.code).toBe(
      'topup_payment_replayed',
    );
    expect(await toppedUp(secret)).toBe('5.000000');
    expect(await h.usdcBalance(wallet)).toBe(parseUsd('5'));
  });

  it('403 topup_not_available for a key paying from the workspace wallet', async () => {
    const { secret } = await createKey(store, identities, { label: 'workspace' }, Date.now());
    const response = await post(secret, { amount_usd: '5' });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'topup_not_available',
    );
  });

  it('403 topup_not_allowed for an own-wallet key without top-ups enabled', async () => {
    const { secret } = await createKey(
      store,
      identities,
      { label: 'off', identity: { kind: 'new' } },
      Date.now(),
    );
    const response = await post(secret, { amount_usd: '5' });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'topup_not_allowed',
    );
  });

  it('400 naming the bounds outside --topup-min-usd .. --topup-max-usd', async () => {
    const { secret } = await createKey(
      store,
      identities,
      { label: 'bounds', identity: { kind: 'new' }, allowTopup: true },
      Date.now(),
    );
    for (const amount of ['1.99', '501', 'five']) {
      const response = await post(secret, { amount_usd: amount });
      expect(response.status).toBe(400);
      const error = ((await response.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('topup_amount_invalid');
      expect(error.message).toMatch(/2\.000000.*500\.000000/);
    }
  });

  it('401 without a key', async () => {
    const response = await post(null, { amount_usd: '5' });
    expect(response.status).toBe(401);
    expect(response.headers.get('payment-required')).toBeNull();
  });
});
