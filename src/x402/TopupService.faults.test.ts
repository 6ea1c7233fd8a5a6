/**
 * Top-up faults on anvil with the real facilitator code path: facilitators that time out, error,
 * lose answers; settlements reverting on chain; crashes; store and chain outages.
 */
import { decodePaymentResponseHeader, HTTPFacilitatorClient } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import { createPublicClient, createWalletClient, http, parseEther, parseGwei } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestUSDCAbi } from '../contracts/index.js';
import { parseUsd } from '../money/index.js';
import { viemChainReader } from './chainReader.js';
import { MemoryTopupLedger } from './ledger/MemoryTopupLedger.js';
import { startStubServer } from './testing/httpStub.js';
import { challenge, codeOf, counting, TOPUP_URL, until } from './testing/topupAssertions.js';
import {
  officialPayment,
  paymentHeader,
  startTopupHarness,
  type TopupHarness,
} from './testing/topupHarness.js';

const URL_ = TOPUP_URL;
let h: TopupHarness;

beforeAll(async () => {
  h = await startTopupHarness();
});
afterAll(async () => {
  await h?.stop();
});

describe('facilitator faults', () => {
  it('a facilitator that times out → 503 facilitator_unavailable, nothing credited', async () => {
    const hanging = await startStubServer(() => {
      // never answers
    });
    try {
      const { service, ledger } = h.service({
        facilitator: new HTTPFacilitatorClient({ url: hanging.url, timeoutMs: 300 }),
      });
      const key = h.newKey();
      const payer = await h.newPayer('10');
      const header = paymentHeader(
        await officialPayment(payer, await challenge(service, key, '5')),
      );
      const reply = await service.handle({
        key,
        body: { amount_usd: '5' },
        paymentSignature: header,
        resourceUrl: URL_,
      });
      expect(reply.status).toBe(503);
      expect(codeOf(reply).code).toBe('facilitator_unavailable');
      expect(reply.headers['Retry-After']).toBe('10');
      expect(hanging.calls).toEqual(['/verify']);
      expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);
      expect(await h.usdcBalance(key.walletAddress)).toBe(0n);
      // The same signature may be retried once the facilitator is back (nothing moved).
      const again = h.service({ ledger }).service;
      const retry = await again.handle({
        key,
        body: { amount_usd: '5' },
        paymentSignature: header,
        resourceUrl: URL_,
      });
      expect(retry.status).toBe(200);
      expect(await ledger.toppedUpMicro(key.keyId)).toBe(parseUsd('5'));
    } finally {
      await hanging.close();
    }
  });

  it('a facilitator that errors → 502 facilitator_error, nothing credited', async () => {
    const failing = await startStubServer((_path, _body, response) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('internal failure');
    });
    try {
      const { service, ledger } = h.service({
        facilitator: new HTTPFacilitatorClient({ url: failing.url }),
      });
      const key = h.newKey();
      const payer = await h.newPayer('10');
      const header = paymentHeader(
        await officialPayment(payer, await challenge(service, key, '5')),
      );
      const reply = await service.handle({
        key,
        body: { amount_usd: '5' },
        paymentSignature: header,
        resourceUrl: URL_,
      });
      expect(reply.status).toBe(502);
      expect(codeOf(reply).code).toBe('facilitator_error');
      expect(codeOf(reply).message).toContain('internal failure');
      expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);
      expect(await h.usdcBalance(key.walletAddress)).toBe(0n);
    } finally {
      await failing.close();
    }
  });

  it('settlement failing on chain → 402 with PAYMENT-RESPONSE success:false, nothing credited', async () => {
    const key = h.newKey();
    const payer = await h.newPayer('10');
    await h.chain.faucet(payer.address, { ethWei: parseEther('0.1') });
    const sink = privateKeyToAccount(generatePrivateKey()).address;
    // Between verify and settle the payer moves its USDC away, so the transfer reverts.
    const draining: FacilitatorClient = {
      verify: async (p, r) => {
        const verdict = await h.facilitatorClient.verify(p, r);
        await h.chain.clients.senderFor(payer).write({
          address: h.asset.address,
          abi: TestUSDCAbi,
          functionName: 'transfer',
          args: [sink, parseUsd('10')],
        });
        return verdict;
      },
      settle: (p, r) => h.facilitatorClient.settle(p, r),
      getSupported: () => h.facilitatorClient.getSupported(),
    };
    const { service, ledger } = h.service({ facilitator: draining });
    const header = paymentHeader(await officialPayment(payer, await challenge(service, key, '5')));
    const reply = await service.handle({
      key,
      body: { amount_usd: '5' },
      paymentSignature: header,
      resourceUrl: URL_,
    });
    expect(reply.status).toBe(402);
    const settle = decodePaymentResponseHeader(reply.headers['PAYMENT-RESPONSE']!);
    expect(settle.success).toBe(false);
    expect(codeOf(reply).code).toBe('topup_payment_invalid');
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);
    expect(await h.usdcBalance(key.walletAddress)).toBe(0n);
    expect(await ledger.listPendingTopups()).toEqual([]);
  });

  it('a settlement transaction reverting on chain → 402, PAYMENT-RESPONSE success:false, nothing credited', async () => {
    const rpc = (method: string, params: unknown[] = []) =>
      h.chain.clients.publicClient.request({
        method: method as 'eth_chainId',
        params: params as unknown as undefined,
      }) as Promise<unknown>;
    const mempool = async () =>
      Number(BigInt(((await rpc('txpool_status')) as { pending: string }).pending));
    const key = h.newKey();
    const payer = await h.newPayer('10');
    await h.chain.faucet(payer.address, { ethWei: parseEther('0.1') });
    const { service, ledger } = h.service();
    const header = paymentHeader(await officialPayment(payer, await challenge(service, key, '5')));
    await rpc('evm_setAutomine', [false]);
    try {
      const replying = service.handle({
        key,
        body: { amount_usd: '5' },
        paymentSignature: header,
        resourceUrl: URL_,
      });
      await until(async () => (await mempool()) >= 1);
      // The payer empties its wallet with a higher tip, so its transfer is mined first and the
      // facilitator's transferWithAuthorization reverts in the same block.
      const wallet = createWalletClient({
        account: payer,
        chain: h.chain.clients.chain,
        transport: http(h.chain.rpcUrl),
      });
      await wallet.writeContract({
        address: h.asset.address,
        abi: TestUSDCAbi,
        functionName: 'transfer',
        args: [privateKeyToAccount(generatePrivateKey()).address, parseUsd('10')],
        // Explicit gas: estimating would run against the pending block, where it already fails.
        gas: 100_000n,
        maxPriorityFeePerGas: parseGwei('100'),
        maxFeePerGas: parseGwei('200'),
      });
      await until(async () => (await mempool()) >= 2);
      await rpc('evm_mine');
      const reply = await replying;
      expect(reply.status).toBe(402);
      const settle = decodePaymentResponseHeader(reply.headers['PAYMENT-RESPONSE']!);
      expect(settle.success).toBe(false);
      expect(settle.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const receipt = await h.chain.clients.publicClient.getTransactionReceipt({
        hash: settle.transaction as `0x${string}`,
      });
      expect(receipt.status).toBe('reverted');
      expect(codeOf(reply).reason).toBe('settlement_failed');
      expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);
      expect(await h.usdcBalance(key.walletAddress)).toBe(0n);
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
  });

  it('a settle whose answer is lost is credited by reconcile, exactly once', async () => {
    // Relays to the real facilitator, but drops the connection after settling on chain.
    const lossy = await startStubServer(async (path, body, response) => {
      const upstream = await fetch(`${h.facilitatorServer.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await upstream.text();
      if (path === '/settle') {
        response.socket?.destroy();
        return;
      }
      response.writeHead(upstream.status, { 'content-type': 'application/json' });
      response.end(text);
    });
    try {
      const ledger = new MemoryTopupLedger();
      const { service } = h.service({
        ledger,
        facilitator: new HTTPFacilitatorClient({ url: lossy.url }),
      });
      const key = h.newKey();
      const payer = await h.newPayer('10');
      const header = paymentHeader(
        await officialPayment(payer, await challenge(service, key, '5')),
      );
      const reply = await service.handle({
        key,
        body: { amount_usd: '5' },
        paymentSignature: header,
        resourceUrl: URL_,
      });
      expect(reply.status).toBe(503);
      expect(codeOf(reply).code).toBe('facilitator_unavailable');
      expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);
      expect(await h.usdcBalance(key.walletAddress)).toBe(parseUsd('5'));
      // A retry while it is pending is not settled twice.
      const retry = await service.handle({
        key,
        body: { amount_usd: '5' },
        paymentSignature: header,
        resourceUrl: URL_,
      });
      expect(retry.status).toBe(503);
      expect(codeOf(retry).code).toBe('topup_pending');

      // A restarted gateway reconciles pending rows at start.
      const restarted = h.service({ ledger }).service;
      const result = await restarted.start();
      await restarted.stop();
      expect(result).toEqual({ credited: 1, failed: 0, stillPending: 0 });
      expect(await ledger.toppedUpMicro(key.keyId)).toBe(parseUsd('5'));
      expect((await restarted.reconcile()).credited).toBe(0);
      const replay = await restarted.handle({
        key,
        body: { amount_usd: '5' },
        paymentSignature: header,
        resourceUrl: URL_,
      });
      expect(replay.status).toBe(409);
      expect(await ledger.toppedUpMicro(key.keyId)).toBe(parseUsd('5'));
    } finally {
      await lossy.close();
    }
  });

  it('a crash between settle and credit leaves a pending row that reconcile credits', async () => {
    const ledger = new MemoryTopupLedger();
    const crashing = Object.create(ledger) as MemoryTopupLedger;
    crashing.creditTopup = async () => {
      throw new Error('database went away');
    };
    const { service } = h.service({ ledger: crashing });
    const key = h.newKey();
    const payer = await h.newPayer('10');
    const header = paymentHeader(await officialPayment(payer, await challenge(service, key, '7')));
    const reply = await service.handle({
      key,
      body: { amount_usd: '7' },
      paymentSignature: header,
      resourceUrl: URL_,
    });
    expect(reply.status).toBe(503);
    expect(codeOf(reply).code).toBe('topup_pending');
    expect(decodePaymentResponseHeader(reply.headers['PAYMENT-RESPONSE']!).success).toBe(true);
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);

    const restarted = h.service({ ledger }).service;
    expect(await restarted.start()).toEqual({ credited: 1, failed: 0, stillPending: 0 });
    await restarted.stop();
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(parseUsd('7'));
    expect(await h.usdcBalance(key.walletAddress)).toBe(parseUsd('7'));
  });
});

describe('store and chain faults on the request path', () => {
  it('a store that cannot record the payment → 503 store_unavailable, facilitator not called', async () => {
    const { client, calls } = counting(h.facilitatorClient);
    const broken = new MemoryTopupLedger();
    broken.beginTopup = async () => {
      throw new Error('disk full');
    };
    const { service } = h.service({ ledger: broken, facilitator: client });
    const key = h.newKey();
    const payer = await h.newPayer('10');
    const header = paymentHeader(await officialPayment(payer, await challenge(service, key, '5')));
    const reply = await service.handle({
      key,
      body: { amount_usd: '5' },
      paymentSignature: header,
      resourceUrl: URL_,
    });
    expect(reply.status).toBe(503);
    expect(codeOf(reply).code).toBe('store_unavailable');
    expect(calls).toEqual([]);
    expect(await h.usdcBalance(key.walletAddress)).toBe(0n);
  });

  it('an unreachable chain RPC → 503 chain_unavailable, nothing charged', async () => {
    const { client, calls } = counting(h.facilitatorClient);
    const deadRpc = createPublicClient({
      transport: http('http://127.0.0.1:1', { retryCount: 0 }),
    });
    const { service, ledger } = h.service({ chain: viemChainReader(deadRpc), facilitator: client });
    const key = h.newKey();
    const payer = await h.newPayer('10');
    const header = paymentHeader(await officialPayment(payer, await challenge(service, key, '5')));
    const reply = await service.handle({
      key,
      body: { amount_usd: '5' },
      paymentSignature: header,
      resourceUrl: URL_,
    });
    expect(reply.status).toBe(503);
    expect(codeOf(reply).code).toBe('chain_unavailable');
    expect(calls).toEqual([]);
    expect(await ledger.listPendingTopups()).toEqual([]);
  });
});
